"""`perfbot dedup`: is this draft report new, or does it duplicate or overlap one already in the repo?"""
from __future__ import annotations

import json
from pathlib import Path

import click

from bot.adapters.git import GitRepository
from bot.adapters.reviewers import reviewer_for
from bot.adapters.store.reviews.dedup_store import VerdictCache, not_duplicates
from bot.cli.common import db_option, open_database, reports_errors, settings_for
from bot.core.reports.parse import parse
from bot.core.reports.records import ReadingOptions
from bot.errors import Invalid
from bot.services.bench.bench_inputs import reading_at
from bot.services.dedup.review import Dedup, ReadOnlyCache

EXIT_OVERLAPS = 3


def existing_reports(repo: GitRepository, ref: str | None) -> tuple[list, ReadingOptions]:
    """The reports at `ref`, and how its `.perfbot.toml` reads them (a draft is read the same way)."""
    sha = repo.resolve(ref or repo.default_ref())
    reading = reading_at(repo, sha)
    changes, _ = repo.snapshot(sha)
    parsed = (parse(c.path, c.data or b"", reading) for c in changes)
    return [r.record for r in parsed if r.record is not None], reading


def _print(review) -> None:
    v, c = review.verdict, review.candidate
    label = "not a duplicate (a person said so)" if review.overruled else v.kind
    click.echo(f"{review.new} vs {review.old}: {label} (confidence {v.confidence:.2f}; "
               f"retrieval score {c.score:.2f} = text {c.text:.2f}, shape {c.shape:.2f}, "
               f"rare root-cause places {c.locations:.2f})"
               + (" [cached]" if review.cached else ""))
    for reason in v.reasons:
        click.echo(f"    - {reason}")
    for problem in v.merge_problems:
        click.echo(f"    ! merged report needs a person: {problem}")


def _repository(repo_path: str | None, files: tuple[str, ...]) -> GitRepository:
    """--repo, else the repository a draft sits in, else the one the command runs in: a draft may be anywhere."""
    if repo_path:
        return GitRepository(repo_path)
    anchors = [Path(files[0]).resolve().parent] if files else []
    for anchor in [*anchors, Path(".").resolve()]:
        repo = GitRepository.containing(anchor)
        if repo is not None:
            return repo
    where = f"{anchors[0]} nor the current folder is" if anchors else "the current folder is not"
    raise click.UsageError(f"{'neither ' if anchors else ''}{where} in a git repository: run it inside the "
                           "checkout whose reports the draft is compared with, or pass --repo PATH")


@click.command("dedup")
@click.argument("files", nargs=-1, type=click.Path(exists=True, dir_okay=False))
@click.option("--all", "backlog", is_flag=True, help="Review every report in the repository against the others.")
@click.option("--repo", "repo_path", default=None, type=click.Path(file_okay=False),
              help="The repository whose reports are compared (default: the one FILE is in, else the current one).")
@click.option("--ref", default=None, help="Compare against the reports at this ref (default: the checked-out branch).")
@click.option("-k", "k", type=click.IntRange(1, 50), default=5, show_default=True, help="Candidates per report.")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@db_option
@reports_errors
def dedup_command(files, backlog, repo_path, ref, k, fmt, db_url) -> None:
    """Print candidates and verdicts; exit 3 when a report duplicates or overlaps another, 0 when it is new."""
    if bool(files) == backlog:
        raise click.UsageError("give draft report FILE(s), or --all for the whole backlog (not both)")
    repo = _repository(repo_path, files)
    try:
        existing, reading = existing_reports(repo, ref)
        key = repo.full_name
    finally:
        repo.close()
    with open_database(db_url) as db:
        reviewer = reviewer_for(settings_for(db_url))
        # A draft is no record: its verdicts are read from the cache but never stored, or the draft would
        # show up as a partner on a real record's page. The backlog's verdicts are about records: kept.
        cache = VerdictCache(db) if backlog else ReadOnlyCache(VerdictCache(db))
        dedup = Dedup(existing, reviewer, cache, not_duplicates(db, key), k=k)
        if backlog:
            reviews = [r for r in dedup.review_all() if r.overlapping]
        else:
            reviews = []
            for file in files:
                result = parse(str(file), Path(file).read_bytes(), reading)
                if result.record is None:
                    raise Invalid("empty report; nothing to compare", "`perfbot lint` says what it lacks", at=str(file))
                reviews += dedup.review(result.record)
    if fmt == "json":
        click.echo(json.dumps([r.as_dict() for r in reviews], indent=2))
    else:
        for review in reviews:
            _print(review)
        overlapping = sum(r.overlapping for r in reviews)
        click.echo(f"{len(existing)} report(s) compared: {overlapping} overlapping pair(s)"
                   + ("" if overlapping else "; this looks new"))
    raise SystemExit(EXIT_OVERLAPS if any(r.overlapping for r in reviews) else 0)
