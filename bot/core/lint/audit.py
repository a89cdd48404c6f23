"""The offline audit: what a coordinator checks structurally in an agent's report, and what it cannot check.

Is the C translation 1-to-1 (the same functions, the same recursion)? Is the reproduction minimal? Do the
measurements support the claim? Whether the two programs run the same algorithm needs a reader: the
agent reviewer's audit says that; this one says it could not.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, cast

from bot.core.lint.program_shape import c_shape, canonical_name, language_shape
from bot.core.reports.records import Finding, PerfIssue, Severity

MAX_PROGRAM_LINES = 60  # a reproduction longer than this is rarely the smallest one
RULES = (
    ("audit-c-functions", "a function of the program has no counterpart in the C translation"),
    ("audit-c-recursion", "a function recurses in one program and not in the other"),
    ("audit-repro-size", f"the program in the language is over {MAX_PROGRAM_LINES} lines: not minimal"),
    ("audit-numbers",
     "the measurements cannot support the claim (too few timed rows, or the claimed threads unmeasured)"),
)
NOT_CHECKED = ("whether both programs run the same algorithm and the same pattern matches "
               "(the offline audit compares structure only)")


def audit(record: PerfIssue, path: str) -> tuple[Finding, ...]:
    findings: list[Finding] = []
    language = [b for b in record.code_blocks if b.lang == "language"]
    c_blocks = [b for b in record.code_blocks if b.lang == "c"]
    if language and c_blocks:
        program, translation = language_shape(language[0].code), c_shape(c_blocks[0].code)
        line = c_blocks[0].line
        # C adds constructor helpers (cons, node) that the language gets from its data types, and writes
        # zero-argument definitions as constants: only functions of the program missing from C count.
        translated = {canonical_name(f) for f in translation.functions}
        wanted = program.functions - program.constants
        missing = sorted(f for f in wanted if canonical_name(f) not in translated)
        if missing and len(translation.functions) < len(wanted):
            findings.append(_finding(path, line, "audit-c-functions",
                                     f"the C translation has no counterpart of {', '.join(missing)} "
                                     f"(it defines {', '.join(sorted(translation.functions)) or 'nothing'})",
                                     "translate function for function, keeping the names, so the comparison "
                                     "measures the runtime and not a different program"))
        if program.recurses != translation.recurses:
            which = "the program recurses but the C translation loops" if program.recurses else \
                "the C translation recurses but the program does not"
            findings.append(_finding(path, line, "audit-c-recursion", f"{which}: not a 1-to-1 translation",
                                     "keep the same recursion in C (a C compiler turns tail calls into loops itself)"))
        if language[0].code.count("\n") + 1 > MAX_PROGRAM_LINES:
            findings.append(_finding(path, language[0].line, "audit-repro-size",
                                     f"the program is {language[0].code.count(chr(10)) + 1} lines long",
                                     "cut it to the smallest program that still shows the gap"))
    findings += _numbers(record, path)
    return tuple(findings)


def _numbers(record: PerfIssue, path: str) -> list[Finding]:
    timed = [m for m in record.measurements if m.seconds is not None]
    if not record.measurements:
        return []
    line = record.line_of("measurements")
    if len(timed) < 2:
        return [_finding(path, line, "audit-numbers", f"the table times {len(timed)} run(s); a ratio needs two",
                         "time the language and the C translation (seq) or 1 and N threads (par)")]
    if record.track == "par" and record.threads and record.threads > 1:
        measured = {m.threads for m in timed if m.threads}
        if measured and record.threads not in measured:
            return [_finding(path, line, "audit-numbers",
                             f"the claim is about {record.threads} threads but the table times {sorted(measured)}",
                             f"add a row timed at {record.threads} threads")]
    return []


def _finding(path: str, line: int, rule: str, message: str, remedy: str) -> Finding:
    return Finding(path, max(1, line), rule, Severity.WARNING, message, remedy)


# The agent reviewer answers the same questions by reading both programs; its own rule ids join these.
AGENT_RULES = (
    ("audit-c-algorithm", "the C translation computes the result differently (another algorithm, other matches)"),
    ("audit-claim", "the stated numbers do not support the claim"),
)
AUDIT_RULE_IDS = tuple(rule for rule, _ in RULES + AGENT_RULES)
AUDIT_SCHEMA = {
    "type": "object",
    "additionalProperties": False,
    "required": ["one_to_one", "minimal", "numbers_support_claim", "findings", "not_checked"],
    "properties": {
        "one_to_one": {"type": "boolean", "description": "same functions, recursion, pattern matches, algorithm"},
        "minimal": {"type": "boolean", "description": "the smallest program that still shows the gap"},
        "numbers_support_claim": {"type": "boolean"},
        "findings": {"type": "array", "maxItems": 8, "items": {
            "type": "object", "additionalProperties": False, "required": ["rule", "message", "remedy"],
            "properties": {"rule": {"type": "string", "enum": list(AUDIT_RULE_IDS)},
                           "message": {"type": "string", "minLength": 3, "maxLength": 400},
                           "remedy": {"type": "string", "minLength": 3, "maxLength": 400}}}},
        "not_checked": {"type": "array", "maxItems": 6, "items": {"type": "string", "maxLength": 300}},
    },
}


@dataclass(frozen=True)
class AuditResult:
    findings: tuple[Finding, ...]
    not_checked: tuple[str, ...]
    reviewer: str
    usage: dict | None = None


def offline_audit(record: PerfIssue, path: str) -> AuditResult:
    return AuditResult(audit(record, path), (NOT_CHECKED,), "offline")


def audit_from_tool_input(data: object, record: PerfIssue, path: str, reviewer: str, usage: dict) -> AuditResult:
    """Check an agent's audit against the schema; its findings point at the C translation's line."""
    import jsonschema

    try:
        jsonschema.validate(data, AUDIT_SCHEMA)
    except jsonschema.ValidationError as exc:
        where = "/".join(str(p) for p in exc.absolute_path) or "the audit"
        raise ValueError(f"{where}: {exc.message[:300]}") from None
    data = cast(dict[str, Any], data)  # the schema checked its shape
    c_line = next((b.line for b in record.code_blocks if b.lang == "c"), 1)
    findings = tuple(_finding(path, record.line_of("measurements", c_line) if f["rule"] in ("audit-numbers",
                                                                                            "audit-claim")
                              else c_line, f["rule"], f["message"], f["remedy"]) for f in data["findings"])
    return AuditResult(findings, tuple(data["not_checked"]), reviewer, usage)
