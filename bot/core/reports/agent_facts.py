"""Facts an agent reviewer read from a report the offline reading could not decide, checked before use.

The agent answers with a forced tool call (FACTS_SCHEMA). An answer is used only where the offline reading
left a fact missing, and only when the words it quotes stand on the line it cites: a fact nobody wrote is
not a fact.
"""
from __future__ import annotations

import dataclasses
from typing import Any

from bot.core.reports.records import BACKENDS, TRACKS, PerfIssue
from bot.core.reports.table_ratios import significant

FACTS_TOOL = "report_facts"
FACTS_SCHEMA = {
    "type": "object",
    "additionalProperties": False,
    "required": ["facts"],
    "properties": {
        "facts": {"type": "array", "maxItems": 4, "items": {
            "type": "object", "additionalProperties": False, "required": ["fact", "value", "line", "quote"],
            "properties": {
                "fact": {"type": "string", "enum": ["track", "backend", "threads", "ratio"]},
                "value": {"type": ["string", "number", "integer"]},
                "line": {"type": "integer", "minimum": 1},
                "quote": {"type": "string", "minLength": 1, "maxLength": 200,
                          "description": "the exact words on that line the fact is read from"},
                "how": {"type": "string", "maxLength": 200, "description": "arithmetic, e.g. '8 / 3.8'"},
            }}},
        "undecidable": {"type": "array", "maxItems": 4, "items": {"type": "string", "maxLength": 300}},
    },
}


def missing_facts(record: PerfIssue) -> tuple[str, ...]:
    """The facts the offline reading left open, in the order an agent should be asked for them."""
    missing = []
    if record.track is None:
        missing.append("track")
    if record.track in (None, "par") and record.backend is None:
        missing.append("backend")
    if record.track in (None, "par") and record.threads is None and record.claim != "gpu":
        missing.append("threads")  # a GPU claim (target / achieved over the CPU) has no thread count
    if record.ratio is None:
        missing.append("ratio")
    return tuple(missing)


def with_agent_facts(record: PerfIssue, text: str, answer: dict) -> tuple[PerfIssue, tuple[str, ...]]:
    """The record with the agent's grounded facts filled in where it had none; and why any fact was refused.

    `answer` must already have passed FACTS_SCHEMA.
    """
    lines = text.replace("\r\n", "\n").split("\n")
    wanted = set(missing_facts(record))
    changes: dict = {}
    facts_lines, sources, evidence = dict(record.lines), dict(record.sources), dict(record.evidence)
    refused = []
    for item in answer.get("facts", []):
        name, line, quote = item["fact"], item["line"], item["quote"]
        if name not in wanted or name in changes:
            continue
        if line > len(lines) or " ".join(quote.split()) not in " ".join(lines[line - 1].split()):
            refused.append(f"{name}: the quoted words are not on line {line}")
            continue
        value = _valid_value(name, item["value"])
        if value is None:
            refused.append(f"{name}: {item['value']!r} is not a valid {name}")
            continue
        changes[name] = value
        facts_lines[name], sources[name] = line, "agent"
        how = f" ({item['how']})" if item.get("how") else ""
        evidence[name] = f"the agent reviewer read '{quote}'{how}"
    if not changes:
        return record, tuple(refused)
    updated = dataclasses.replace(record, **changes, lines=tuple(facts_lines.items()),
                                  sources=tuple(sources.items()), evidence=tuple(evidence.items()))
    return updated, tuple(refused)


def _valid_value(name: str, value: Any) -> object | None:  # any YAML or JSON value an agent wrote
    if name == "track":
        return value if value in TRACKS else None
    if name == "backend":
        return value if value in BACKENDS else None
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    if name == "threads":
        return int(number) if number >= 1 and number == int(number) else None
    return significant(number)
