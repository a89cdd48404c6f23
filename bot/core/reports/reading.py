"""A report as sync reads it: parsed, linted and audited in one pure step."""
from __future__ import annotations

from dataclasses import dataclass

from bot.core.lint.audit import audit
from bot.core.lint.rules import lint, too_large, with_history
from bot.core.reports.parse import parse
from bot.core.reports.records import Finding, ParseResult, ReadingOptions


@dataclass(frozen=True)
class Reading:
    """One report file's parse and findings; only the check of `supersedes` against history is left to do."""

    path: str
    result: ParseResult
    lint_findings: tuple[Finding, ...]  # lint(known_slugs=None): sorted by line, then rule
    audit_findings: tuple[Finding, ...]
    oversized: bool = False  # over ReadingOptions.max_bytes: read in part, and never sent to an LLM

    @property
    def supersedes(self) -> tuple[str, ...]:
        return tuple(self.result.record.supersedes) if self.result.record else ()

    def findings(self, known_slugs: frozenset[str]) -> tuple[Finding, ...]:
        """Everything lint and audit find, with `supersedes` checked against the slugs history has seen."""
        found = self.lint_findings
        if self.supersedes:
            found = with_history(found, self.result, path=self.path, known_slugs=known_slugs)
        return found + self.audit_findings


def reading_of(path: str, result: ParseResult, reading: ReadingOptions = ReadingOptions()) -> Reading:
    """Lint and audit an already parsed report (one the agent reviewer filled facts into, say) with the
    repository's reading options (parsed with the same)."""
    audited = audit(result.record, path) if result.record is not None else ()
    return Reading(path, result, lint(result, path=path, reading=reading), audited)


def read_report(path: str, data: bytes, reading: ReadingOptions = ReadingOptions()) -> Reading:
    """A report over the size limit is not read at all: no record (so no reviewer, retrieval index or model ever
    sees it), one error that says what to do, and its issue mirrored with that error."""
    if len(data) <= reading.max_bytes:
        return reading_of(path, parse(path, data, reading), reading)
    finding = too_large(path, len(data), reading.max_bytes)
    return Reading(path, ParseResult(None, (finding,)), (finding,), (), oversized=True)
