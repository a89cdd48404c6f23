"""Linting report files on disk, with `supersedes` judged against every history that can be reached."""
from __future__ import annotations

from pathlib import Path

from bot.adapters.git import GitRepository
from bot.adapters.store.engine import Database
from bot.adapters.store.queries import all_known_slugs
from bot.core.lint.audit import audit
from bot.core.lint.rules import lint
from bot.core.reports.parse import parse
from bot.core.reports.records import Finding, ReadingOptions
from bot.services.reports.fact_review import FactReview


class UnreadableReport(Exception):
    """A report file could not be read; the message names it and the reason."""


def history_slugs(files: list[Path], db: Database | None) -> frozenset[str] | None:
    """Slugs history knows: the store's (if given) and every git history the files live in.

    None means no history is reachable, and then `supersedes` cannot be judged at all.
    """
    known: set[str] = set()
    reachable = db is not None
    if db is not None:
        with db.session() as session:
            known.update(all_known_slugs(session))
    seen_repos: set[Path] = set()
    for file in files:
        repo = GitRepository.containing(file.parent)
        if repo is None:
            continue
        if repo.path not in seen_repos:
            seen_repos.add(repo.path)
            known.update(repo.slugs_ever())
            reachable = True
        repo.close()
    return frozenset(known) if reachable else None


def lint_files(files: list[Path], known_slugs: frozenset[str] | None, word_budget: int,
               facts: FactReview | None = None, notes: list[tuple[str, str]] | None = None,
               reading: ReadingOptions = ReadingOptions()) -> list[Finding]:
    """Every finding of every file, read as the repository reads them (`reading`); with `facts`, the agent
    reviewer fills the facts the offline reading left open first, and `notes` gets (file, what the agent said)
    for each fact it filled or lost."""
    findings: list[Finding] = []
    for file in files:
        try:
            data = file.read_bytes()
        except OSError as exc:
            raise UnreadableReport(f"{file}: cannot read ({exc.strerror})") from None
        result = parse(str(file), data, reading)
        if facts is not None:
            reviewed = facts.review(result, data.decode("utf-8", errors="replace"))
            result = reviewed.result
            if notes is not None:
                notes.extend((str(file), note) for note in reviewed.notes())
        findings.extend(lint(result, path=str(file), known_slugs=known_slugs, word_budget=word_budget,
                             reading=reading))
        if result.record is not None:
            findings.extend(audit(result.record, str(file)))
    return findings
