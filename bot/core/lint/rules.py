"""lint(result): the parser's findings plus every rule in RULES, each naming the line and the remedy."""
from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from bot.core.lint.checks import (
    LintContext,
    Problem,
    backend_missing,
    c_translation_missing,
    context_missing,
    draft_location,
    file_name,
    fix_missing,
    fix_ref_invalid,
    measurements_missing,
    ratio_meaning,
    ratio_mismatch,
    ratio_missing,
    ratio_unsure,
    reference_within_factor,
    repro_missing,
    reserved_name,
    reserved_tree,
    root_cause_missing,
    seq_within_tolerance,
    supersedes_self,
    supersedes_unknown,
    threads_missing,
    title_missing,
    too_long,
    track_missing,
)
from bot.core.reports.parse import parse
from bot.core.reports.records import Finding, ParseResult, PerfIssue, ReadingOptions, Severity

Check = Callable[[PerfIssue, LintContext], Iterable[Problem]]


@dataclass(frozen=True)
class Rule:
    """One lint rule: stable id, severity, one-line summary (for docs), and its check (None: the parser's)."""

    id: str
    severity: Severity
    summary: str
    check: Check | None = None
    needs_record: bool = True

    @property
    def emitted_by(self) -> str:
        return "parser" if self.check is None else "linter"


E, W, N = Severity.ERROR, Severity.WARNING, Severity.NOTE
# Every rule id, in the order the docs list them. Ids are stable: tools and people filter on them.
RULES: tuple[Rule, ...] = (
    Rule("empty", E, "file has no content"),
    Rule("encoding", E, "file is not valid UTF-8 (reported at the line of the first bad byte)"),
    Rule("too-large", E, "file is over the instance's size limit ([llm] report_max_bytes, 256 KB by default): it is "
         "not read, its issue says so, and no LLM is asked about it"),
    Rule("front-matter", E, "front matter is unparsable YAML, not a mapping, or its opening `---` is never closed"),
    Rule("front-matter-key", W, "front matter has an unknown (or repeated) key; the closest known key is suggested"),
    Rule("front-matter-value", E, "a front matter value is invalid: track, backend, threads, ratio, fix or supersedes"),
    Rule("fence-unclosed", E, "a code fence is opened and never closed"),
    Rule("nesting", E, "blockquotes and lists nested more than 100 levels deep (a list item counts two): not read"),
    Rule("file-name", E, "file name is not perf_[a-z0-9_]+.md", file_name, needs_record=False),
    Rule("reserved-name", E, "a path through .perfbot-run, .perfbot-recipe or .perfbot-built: names perfbot "
         "reserves and ignores in a checkout", reserved_name, needs_record=False),
    Rule("reserved-in-tree", W, "the repository commits a path under .perfbot-run, .perfbot-recipe or .perfbot-built "
         "(ignored by every run): said on every report of the tree, since none of their paths shows it",
         reserved_tree, needs_record=False),
    Rule("draft-location", N, "a draft outside devs/issues/: linted as it is, read as a report only once moved there",
         draft_location, needs_record=False),
    Rule("title-missing", W, "no `# Title` heading", title_missing),
    Rule("track-missing", E, "track is neither stated nor inferable", track_missing),
    Rule("backend-missing", E, "par report without a backend", backend_missing),
    Rule("threads-missing", E, "par report without a thread count", threads_missing),
    Rule("ratio-missing", E, "no ratio stated nor computable from the measurements table", ratio_missing),
    Rule("seq-within-tolerance", E, "seq ratio <= 2.0: up to 2x slower than C is near C, not an issue",
         seq_within_tolerance),
    Rule("reference-within-factor", E, "a reference report whose ratio is within [verify] reference_factor: "
         "this revision is not slower than the reference", reference_within_factor),
    Rule("ratio-mismatch", E, "stated ratio differs by more than 10% from the table's ratio and from every "
         "comparable pair of its rows", ratio_mismatch),
    Rule("ratio-unsure", W, "the table cannot tell which row a stated ratio comes from (the claim's thread count "
         "is not timed): the rows it considered are named", ratio_unsure),
    Rule("ratio-meaning", N, "the ratio is not plain ideal / achieved (a GPU compared with a CPU): what it means",
         ratio_meaning),
    Rule("context-missing", W, "no context section", context_missing),
    Rule("repro-missing", E, "no reproduction section, or no code block in the language", repro_missing),
    Rule("c-translation-missing", E, "no fenced `c` block (the 1-to-1 C translation)", c_translation_missing),
    Rule("measurements-missing", W, "no measurements table", measurements_missing),
    Rule("root-cause-missing", E, "no root cause section (\"unknown\" as its text is fine)", root_cause_missing),
    Rule("fix-missing", E, "no fix section (\"unknown\" as its text is fine)", fix_missing),
    Rule("too-long", E, "prose (code, tables, front matter and headings excluded) is over the word budget", too_long),
    Rule("supersedes-unknown", E, "`supersedes` names a slug history has never seen", supersedes_unknown),
    Rule("supersedes-self", E, "a report supersedes itself", supersedes_self),
    Rule("fix-ref-invalid", E,
         "`fix:` is not inline/unknown/a commit sha/a valid git branch, or names main/master/HEAD",
         fix_ref_invalid),
)
RULES_BY_ID = {rule.id: rule for rule in RULES}
# The rules that need every slug history has seen (lint skips them when known_slugs is None).
HISTORY_RULES = frozenset({"supersedes-unknown"})


def lint(result: ParseResult, *, path: str | None = None, known_slugs: frozenset[str] | None = None,
         word_budget: int = 500, reading: ReadingOptions = ReadingOptions()) -> tuple[Finding, ...]:
    """Parse findings plus every rule's findings for one report, sorted by (line, rule); `reading` is the
    repository's, as the report was parsed with."""
    file = _file_of(result, path)
    context = LintContext(path=file, known_slugs=known_slugs, word_budget=word_budget, reading=reading)
    findings = [dataclasses.replace(f, file=file) if f.file != file else f for f in result.findings]
    findings.extend(_run_rules(result.record, context))
    return tuple(sorted(findings, key=lambda f: (f.line, f.rule)))


def with_history(findings: tuple[Finding, ...], result: ParseResult, *, path: str | None = None,
                 known_slugs: frozenset[str]) -> tuple[Finding, ...]:
    """`findings` from lint(known_slugs=None), plus the checks against the slugs history has seen.

    Sync reads a chunk's reports before the transaction that writes them, without the store; this adds what
    that reading left out, so the two steps together find exactly what lint(known_slugs=...) finds, in the same order.
    """
    context = LintContext(path=_file_of(result, path), known_slugs=known_slugs, word_budget=0)
    added = list(_run_rules(result.record, context, HISTORY_RULES))
    return tuple(sorted(findings + tuple(added), key=lambda f: (f.line, f.rule))) if added else findings


def lint_bytes(path: str, data: bytes, **options: Any) -> tuple[Finding, ...]:
    """Parse and lint in one call: `options` are lint's keyword arguments (`reading` parses too). A file over
    the size limit is not parsed: its one finding says so."""
    reading = options.get("reading", ReadingOptions())
    if len(data) > reading.max_bytes:
        return (too_large(path, len(data), reading.max_bytes),)
    return lint(parse(path, data, reading), path=path, **options)


def too_large(path: str, size: int, limit: int) -> Finding:
    return Finding(path, 1, "too-large", Severity.ERROR,
                   f"the report is {size:,} bytes, over the {limit:,} this instance reads: it is not read, and no "
                   "reviewer model is asked about it",
                   "keep one finding per report: a minimal reproduction, its C translation and a short table")


def _run_rules(record: PerfIssue | None, context: LintContext, only: frozenset[str] | None = None) -> Iterator[Finding]:
    for rule in RULES:
        if rule.check is None or (record is None and rule.needs_record) or (only is not None and rule.id not in only):
            continue
        # None reaches only the rules declared needs_record=False, whose checks take PerfIssue | None.
        for problem in rule.check(record, context):  # type: ignore[arg-type]
            yield Finding(context.path, max(1, problem.line), rule.id, rule.severity, problem.message, problem.remedy)


def _file_of(result: ParseResult, path: str | None) -> str:
    if path is not None:
        return path
    if result.record is not None:
        return result.record.path
    return result.findings[0].file if result.findings else ""
