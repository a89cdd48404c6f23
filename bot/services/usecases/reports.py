"""Reports: a push synced and mirrored (with the dedup review, merge PRs and fixes that follow), the hourly
reconcile, installations remembered, and people's closes, reopens and "not a duplicate" on issues."""
from __future__ import annotations

import dataclasses
import hashlib
import json
import logging

from bot.adapters.store import service_queries as queries
from bot.adapters.store.bench import fix_store, merge_store
from bot.adapters.store.locks import repo_lock
from bot.adapters.store.mirror_queries import flagged_partners, record_by_issue
from bot.adapters.store.queue import NewDelivery
from bot.adapters.store.reviews.dedup_store import remember_not_duplicate
from bot.core.config.instance import DEFAULT_OPERATOR, OperatorConfig
from bot.core.tracker import overrides
from bot.services.bench.bench_inputs import reading_at
from bot.services.dedup.budget import Budgeted, BudgetSpent, budgeted
from bot.services.dedup.dedup_flow import audit_changed, comment_on_issues, propose_merges, review_changed
from bot.services.dedup.live_index import LiveIndexes
from bot.services.reports.fact_review import fact_review_for
from bot.services.reports.mirror import MirrorSummary
from bot.services.reports.sync import SyncSummary, sync
from bot.services.usecases.context import Context
from bot.services.usecases.fixes import Fixes

log = logging.getLogger("perfbot.services")
REVIEW_EVENT = "perfbot.review"  # reports a push's LLM budget left unreviewed, reviewed later by a worker


class Reports:
    def __init__(self, ctx: Context, fixes: Fixes) -> None:
        self.ctx = ctx
        self.fixes = fixes  # after a sync: fix branches followed, parity of local branches checked
        self.indexes = LiveIndexes()  # retrieval, kept in step with the store push by push

    def sync_and_mirror(self, full_name: str, after: str | None,
                        installation_id: int | None) -> tuple[SyncSummary, MirrorSummary]:
        """Sync up to `after` (default: the default branch), review what changed for overlaps, mirror, comment."""
        db, source = self.ctx.db, self.ctx.source
        reviewer = budgeted(self.ctx.reviewer, db, self.operator.llm)  # this push's share of the LLM budget
        installation_id = self.ctx.installation(full_name, installation_id)
        tracker = self.ctx.trackers(full_name, installation_id)
        outcomes = []
        with repo_lock(db, full_name), source.open(full_name, installation_id) as repo:
            # A local repository is small and new to its user: its first sync tells its whole story.
            summary = sync(db, repo, ref=after, history_on_first_sync=source.is_local(full_name),
                           facts=fact_review_for(reviewer, db), max_bytes=self.operator.llm.report_max_bytes)
            asked = summary.touched - summary.oversized  # an oversized report is mirrored, never sent to an LLM
            reviewed = review_changed(db, full_name, asked, reviewer, self.indexes, summary.reading)
            waiting = reviewed.waiting | audit_changed(db, full_name, asked, reviewer, summary.reading)
            partners = {r.old for r in reviewed.reviews}
            # Issues first (their labels already show the verdicts), so the PR and comments can point at them.
            mirrored = self.ctx.mirror(tracker, full_name, summary.touched | partners)
            outcomes = self._propose(full_name, installation_id, repo, tracker, reviewed.reviews)
            self.fixes.after_sync(repo, tracker, full_name, summary.touched, installation_id)
            if outcomes:  # under the lock: two runs of a delivery must not each find no comment and post one
                comment_on_issues(db, full_name, tracker, outcomes)
        if waiting:
            self._review_later(full_name, installation_id, summary.head, waiting)
        log.info("%s: sync %s, mirror %s, %d overlap(s), %d waiting for the LLM budget", full_name,
                 dict(summary.counts), dict(mirrored.counts), len(outcomes), len(waiting))
        return summary, mirrored

    @property
    def operator(self) -> OperatorConfig:
        return self.ctx.bench.operator if self.ctx.bench is not None else DEFAULT_OPERATOR

    def _propose(self, full_name: str, installation_id: int | None, repo, tracker, reviews) -> list:
        if not reviews:
            return []
        outcomes = propose_merges(reviews, repo, tracker, self.ctx.publisher(full_name, installation_id),
                                  repo.default_ref())
        for outcome in outcomes:
            if outcome.pull:  # the merge was proposed as a PR
                review = outcome.review
                merge_store.opened(self.ctx.db, full_name, outcome.pull, review.new, review.old,
                                   f"Merge {review.old} into {review.new}", review.verdict.reviewer)
        return outcomes

    def _review_later(self, full_name: str, installation_id: int | None, head: str, slugs: set[str]) -> None:
        """The reports the budget left: one queued delivery, reviewed when the budget allows (review_waiting)."""
        enqueue = self.ctx.fixes.enqueue if self.ctx.fixes is not None else None
        if enqueue is None:
            log.warning("%s: %d report(s) wait for an LLM review, and this process queues nothing", full_name,
                        len(slugs))
            return
        payload = json.dumps({"slugs": sorted(slugs)})
        key = hashlib.sha256(f"{full_name} {head} {payload}".encode()).hexdigest()[:24]
        enqueue(NewDelivery(f"review-{key}", REVIEW_EVENT, None, full_name, installation_id, payload))

    def review_waiting(self, full_name: str, installation_id: int | None, slugs: set[str]) -> int:
        """A queued review of reports a push's budget left: as much as this budget allows, the rest queued
        again; when the hour's budget is spent, the delivery itself waits (BudgetSpent, no failed attempt)."""
        db = self.ctx.db
        reviewer = budgeted(self.ctx.reviewer, db, self.operator.llm)
        if isinstance(reviewer, Budgeted):
            reviewer.budget.check()  # BudgetSpent before anything is done when nothing may be asked now
        installation_id = self.ctx.installation(full_name, installation_id)
        tracker = self.ctx.trackers(full_name, installation_id)
        with repo_lock(db, full_name), self.ctx.source.open(full_name, installation_id) as repo:
            reading = dataclasses.replace(reading_at(repo, repo.resolve(repo.default_ref())),
                                          max_bytes=self.operator.llm.report_max_bytes)
            reviewed = review_changed(db, full_name, slugs, reviewer, self.indexes, reading)
            waiting = reviewed.waiting | audit_changed(db, full_name, slugs - reviewed.waiting, reviewer, reading)
            self.ctx.mirror(tracker, full_name, {r.old for r in reviewed.reviews} | {r.new for r in reviewed.reviews})
            outcomes = self._propose(full_name, installation_id, repo, tracker, reviewed.reviews)
            head = repo.resolve(repo.default_ref())
        if outcomes:
            comment_on_issues(db, full_name, tracker, outcomes)
        if waiting:
            if isinstance(reviewer, Budgeted) and not reviewer.budget.used:  # nothing could be asked: wait
                raise BudgetSpent(f"{full_name}: {len(waiting)} report(s) still wait for an LLM review",
                                  retry_after=600.0)
            self._review_later(full_name, installation_id, head, waiting)
        return len(slugs) - len(waiting)

    def mirror(self, full_name: str, installation_id: int | None, slugs: set[str] | None) -> MirrorSummary:
        return self.ctx.mirror(self.ctx.tracker(full_name, installation_id), full_name, slugs)

    def reconcile(self) -> dict[str, str]:
        """Re-sync every known repository from git and re-check every issue, so a missed push heals itself."""
        outcome: dict[str, str] = {}
        for full_name in self.ctx.repositories():
            try:
                summary, _ = self.sync_and_mirror(full_name, None, None)
                self.mirror(full_name, None, None)
                outcome[full_name] = summary.mode
            except Exception as exc:  # one repository's outage must not stop the others' reconcile
                log.warning("reconcile of %s failed: %s", full_name, exc)
                outcome[full_name] = f"failed: {exc}"
        return outcome

    def record_installation(self, installation_id: int, account: str, repos: list[str], *, active: bool) -> None:
        queries.save_installation(self.ctx.db, installation_id, account, repos, active)

    def update_installation_repos(self, installation_id: int, account: str, added: list[str],
                                  removed: list[str]) -> None:
        queries.change_installation_repos(self.ctx.db, installation_id, account, added, removed)

    def issue_changed_by_person(self, full_name: str, number: int, action: str, actor: str, delivery_id: str) -> None:
        found = record_by_issue(self.ctx.db, full_name, number)
        if found is None:
            return  # not an issue perfbot mirrors
        record_id, slug, state = found
        change = overrides.decide(state, action)
        if change.event is None:
            return
        queries.apply_person_change(self.ctx.db, record_id, change.new_state, change.event, actor, delivery_id,
                                    change.restore_body)
        self.mirror(full_name, None, {slug})

    def override(self, full_name: str, slug: str, closing: bool, actor: str, delivery_id: str,
                 reason: str) -> int | None:
        """A maintainer's close (or its undoing) by command: the same logged override as closing the issue. The
        record's id, or None when the record is not in a state the override changes."""
        record = fix_store.open_records(self.ctx.db, full_name).get(slug)
        change = overrides.decide(record.state if record else "", "closed" if closing else "reopened")
        if record is None or change.event is None:
            return None
        queries.apply_person_change(self.ctx.db, record.record_id, change.new_state, change.event, actor,
                                    delivery_id, change.restore_body, reason)
        return record.record_id

    def overrule_dedup(self, full_name: str, number: int, actor: str) -> set[str]:
        """A person says the issue's record is not a duplicate: remember it for every pair it is flagged in."""
        found = record_by_issue(self.ctx.db, full_name, number)
        if found is None:
            return set()
        _, slug, _ = found
        partners = flagged_partners(self.ctx.db, full_name, slug)
        for partner in partners:
            remember_not_duplicate(self.ctx.db, full_name, slug, partner, actor)
        if partners:
            self.mirror(full_name, None, {slug, *partners})
        return partners
