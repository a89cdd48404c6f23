"""Verdicts on a pair of reports: the schema a reviewer must fill, and checking what it filled."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, cast

import jsonschema

KINDS = ("duplicate", "subsumes", "overlaps", "distinct")
OVERLAPPING = frozenset({"duplicate", "subsumes", "overlaps"})
# Bump when the reviewer's instructions or schema change: cached verdicts of older prompts are not reused.
PROMPT_VERSION = "2026-12-02.2"

VERDICT_SCHEMA = {
    "type": "object",
    "additionalProperties": False,
    "required": ["verdict", "confidence", "reasons"],
    "properties": {
        "verdict": {"type": "string", "enum": list(KINDS),
                    "description": "duplicate: same finding; subsumes: report A covers all of B and more; "
                                   "overlaps: they share a root cause but each has something the other lacks; "
                                   "distinct: different root causes, even if programs or words look alike."},
        "confidence": {"type": "number", "minimum": 0, "maximum": 1},
        "reasons": {"type": "array", "minItems": 1, "maxItems": 6,
                    "items": {"type": "string", "minLength": 3, "maxLength": 400}},
        "merged_report": {"type": "string", "maxLength": 20000,
                          "description": "For duplicate, subsumes and overlaps: one report covering both, in the "
                                         "team's format, with both slugs in `supersedes`. Omit for distinct."},
    },
}


class InvalidVerdict(ValueError):
    """A reviewer's answer does not fit the verdict schema; the message says where."""


@dataclass(frozen=True)
class Verdict:
    kind: str
    confidence: float
    reasons: tuple[str, ...]
    merged_report: str | None
    reviewer: str
    prompt_version: str = PROMPT_VERSION
    usage: dict = field(default_factory=dict, compare=False)
    merge_problems: tuple[str, ...] = ()  # lint errors of merged_report: a merge people must finish by hand

    @property
    def overlapping(self) -> bool:
        return self.kind in OVERLAPPING

    def as_dict(self) -> dict:
        return {"verdict": self.kind, "confidence": self.confidence, "reasons": list(self.reasons),
                "merged_report": self.merged_report, "reviewer": self.reviewer,
                "prompt_version": self.prompt_version, "usage": dict(self.usage),
                "merge_problems": list(self.merge_problems)}


def verdict_from_tool_input(data: object, reviewer: str, usage: dict | None = None) -> Verdict:
    """Check untrusted reviewer output against the schema; nothing outside these fields is ever used."""
    try:
        jsonschema.validate(data, VERDICT_SCHEMA)
    except jsonschema.ValidationError as exc:
        where = "/".join(str(p) for p in exc.absolute_path) or "the verdict"
        raise InvalidVerdict(f"{where}: {exc.message[:300]}") from None
    data = cast(dict[str, Any], data)  # the schema checked its shape
    kind = data["verdict"]
    merged = data.get("merged_report") if kind in OVERLAPPING else None
    if kind in OVERLAPPING and not merged:
        raise InvalidVerdict(f"merged_report: required when the verdict is {kind}")
    return Verdict(kind, float(data["confidence"]), tuple(data["reasons"]), merged, reviewer, PROMPT_VERSION,
                   usage or {})

