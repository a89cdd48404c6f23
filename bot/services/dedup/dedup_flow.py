"""Acting on dedup verdicts for reports a push brought: a merge branch and PR, and a comment on both issues.

Nothing here writes to the default branch: the merge is a commit on a perfbot/merge-... branch, proposed
as a pull request for people to merge, and only when the offline reviewer agrees with the verdict: an LLM's
answer proposes, people (or the deterministic reviewer) dispose. When a person merges the PR, sync sees the
deletion plus the superseding report and marks the old record merged, which closes its issue as a duplicate.
"""
from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable
from dataclasses import dataclass

from bot.adapters.git import GitRepository
from bot.adapters.store.bench import merge_store
from bot.adapters.store.engine import Database
from bot.adapters.store.mirror_queries import issue_numbers, live_reports
from bot.adapters.store.reviews.dedup_store import VerdictCache, audited, not_duplicates, save_audit
from bot.adapters.store.reviews.retrieval_store import live_reports_named
from bot.adapters.templates import render
from bot.core.dedup import offline_reviewer
from bot.core.dedup.offline_reviewer import merge_reports
from bot.core.dedup.verdicts import PROMPT_VERSION
from bot.core.reports.records import REPORT_DIR, ReadingOptions
from bot.core.tracker.issue_view import comment_marker
from bot.errors import NotFound
from bot.services.dedup.budget import BudgetSpent
from bot.services.dedup.live_index import LiveIndexes
from bot.services.dedup.review import Dedup, PairReview, Reviewer

log = logging.getLogger("perfbot.dedup")
BOT_AUTHOR = ("perfbot", "perfbot@users.noreply.github.com")


@dataclass(frozen=True)
class DedupOutcome:
    review: PairReview
    branch: str | None
    pull: int | None


@dataclass
class Reviewed:
    reviews: list[PairReview]
    waiting: set[str]  # reports the LLM budget left unreviewed: they wait in the queue (perfbot.review)


def review_changed(db: Database, full_name: str, changed: set[str], reviewer: Reviewer,
                   indexes: LiveIndexes | None = None, reading: ReadingOptions = ReadingOptions()) -> Reviewed:
    """Verdicts for every live report `changed` names, against every other live report of the repository,
    each read as the repository reads them (`reading`, from its `.perfbot.toml`, as sync read them). An LLM's
    verdict that the offline reviewer does not share is kept unseconded (no merge branch from it).

    With `indexes` (a process's long-lived ones) the index is updated by what changed, not rebuilt.
    """
    index, records, step = (indexes or LiveIndexes()).current(db, full_name, reading)
    log.debug("%s: retrieval index %s", full_name, step)
    wanted = [records[slug] for slug in sorted(changed) if slug in index]
    if not wanted or len(index) < 2:
        return Reviewed([], set())
    dedup = Dedup([], reviewer, VerdictCache(db), not_duplicates(db, full_name), index=index, records=records)
    reviews: list[PairReview] = []
    waiting: set[str] = set()
    for report in wanted:
        try:
            found = [review for review in dedup.review(report) if review.overlapping]
        except BudgetSpent as exc:
            log.info("%s: %s; %s waits for its review", full_name, exc, report.slug)
            waiting.add(report.slug)
            continue
        reviews += [_seconded(review, records) for review in found]
    return Reviewed(reviews, waiting)


def _seconded(review: PairReview, records) -> PairReview:
    if review.verdict.reviewer == offline_reviewer.NAME:
        return review
    second = offline_reviewer.review(records[review.new], records[review.old], review.candidate)
    return dataclasses.replace(review, seconded=second.overlapping)


def propose_merges(reviews: list[PairReview], repo: GitRepository, tracker, publish: Callable[[str], None],
                   base_ref: str) -> list[DedupOutcome]:
    """One branch and pull request per new report: its merge with its closest overlap, if that lints clean.

    Other overlaps of the same report are commented on; merging them all mechanically at once would make
    a report nobody reviewed, so people take the rest from the comments.
    """
    outcomes = []
    base = repo.resolve(base_ref)
    involved: set[str] = set()  # reports a merge PR of this run keeps or drops: two new reports that overlap
    for review in sorted(reviews, key=lambda r: -r.candidate.score):  # each other get one PR, not one each
        verdict = review.verdict
        if not review.seconded or not verdict.merged_report or verdict.merge_problems \
                or {review.new, review.old} & involved:
            outcomes.append(DedupOutcome(review, None, None))
            continue
        branch = f"perfbot/merge-{review.new}"
        files = {f"{REPORT_DIR}/{review.old}.md": None,
                 f"{REPORT_DIR}/{review.new}.md": verdict.merged_report.encode("utf-8")}
        repo.commit_files(base, branch, files, f"Merge {review.old} into {review.new}\n\n"
                          f"perfbot dedup verdict: {verdict.kind} ({verdict.confidence:.2f}).", BOT_AUTHOR)
        publish(branch)
        body = render("merge_pull.md.j2", marker=comment_marker("merge", review.new), review=review)
        pull = tracker.open_pull(branch, base_ref, f"Merge {review.old} into {review.new}", body)
        involved.update((review.new, review.old))
        outcomes.append(DedupOutcome(review, branch, pull))
    return outcomes


def propose_person_merge(db: Database, full_name: str, repo: GitRepository, tracker, publish: Callable[[str], None],
                         keep: str, drop: str, actor: str) -> int:
    """A person's `dup`/`merge`: the same branch and PR as a reviewer's merge, on their word instead."""
    reports = {r.slug: r for r in live_reports(db, full_name)}
    if keep not in reports or drop not in reports:
        raise NotFound(f"both reports must be open to merge them: {keep}, {drop}", name=f"{keep}, {drop}")
    base_ref = repo.default_ref()
    branch = f"perfbot/merge-{keep}"
    files = {f"{REPORT_DIR}/{drop}.md": None,
             f"{REPORT_DIR}/{keep}.md": merge_reports(reports[keep], reports[drop]).encode("utf-8")}
    repo.commit_files(repo.resolve(base_ref), branch, files, f"Merge {drop} into {keep}\n\nAsked by {actor}.",
                      BOT_AUTHOR)
    publish(branch)
    body = render("person_merge_pull.md.j2", marker=comment_marker("merge", keep), keep=keep, drop=drop, actor=actor)
    number = tracker.open_pull(branch, base_ref, f"Merge {drop} into {keep}", body)
    merge_store.opened(db, full_name, number, keep, drop, f"Merge {drop} into {keep}", actor)
    return number


def comment_on_issues(db: Database, full_name: str, tracker, outcomes: list[DedupOutcome]) -> int:
    """One marked comment per pair on each of the two issues, edited when the verdict changes."""
    numbers = issue_numbers(db, full_name)
    written = 0
    for outcome in outcomes:
        review = outcome.review
        marker = comment_marker("dedup", f"{review.new} {review.old}")
        body = render("dedup_comment.md.j2", marker=marker, new=review.new, old=review.old, verdict=review.verdict,
                      pull=outcome.pull, seconded=review.seconded)
        for slug in (review.new, review.old):
            if slug in numbers:
                tracker.upsert_comment(numbers[slug], marker, body, None)
                written += 1
    return written


def audit_changed(db: Database, full_name: str, changed: set[str], reviewer,
                  reading: ReadingOptions = ReadingOptions()) -> set[str]:
    """The agent reviewer's audit of each changed report, once per content; the offline audit already ran in sync.
    Returns the reports the LLM budget left waiting."""
    if getattr(reviewer, "name", "offline") == "offline" or not changed:
        return set()
    waiting: set[str] = set()
    for report in live_reports_named(db, full_name, changed, reading):
        if audited(db, report.content_hash, reviewer.name, PROMPT_VERSION):
            continue
        try:
            answer = reviewer.audit(report, report.path)
        except BudgetSpent:
            waiting.add(report.slug)
            continue
        save_audit(db, full_name, report.slug, report.content_hash, PROMPT_VERSION, answer)
    return waiting
