"""Regression guards: every fixed record's claim measured again on the default branch, after pushes pause
(`[guards] debounce_minutes`) or at `[guards] schedule`; a claim that reproduces again reopens the record as
`regressed` with its numbers and starts a bisection between the last passing commit and the failing one.

A debounced check is a delivery due later that names the head it was queued for: when it runs and the default
branch has moved on, a later push's check (due later still) measures the newer head instead, so a burst of
pushes costs one measurement per guard.
"""
from __future__ import annotations

import hashlib
import json
import logging
from datetime import UTC, datetime, timedelta

from bot.adapters.git import GitRepository
from bot.adapters.schedule import last_due
from bot.adapters.store.bench import fix_store, guard_store
from bot.adapters.store.engine import Database
from bot.adapters.store.queue import NewDelivery
from bot.core.config import GuardSettings
from bot.core.verify.bench_run import BenchRun, RunOptions
from bot.errors import UserError
from bot.services.bench.bench_flow import reproduction
from bot.services.bench.bench_inputs import GUARD, read_config, read_record
from bot.services.bench.fix_flow import FixFlow

log = logging.getLogger("perfbot.guards")
EVENT = "perfbot.guards"


class GuardFlow:
    def __init__(self, db: Database, fixes: FixFlow, enqueue_at) -> None:
        self.db = db
        self.fixes = fixes
        self.enqueue_at = enqueue_at  # (NewDelivery, due=time) -> stored? (DeliveryQueue.enqueue)

    def settings(self, repo: GitRepository) -> GuardSettings:
        return read_config(repo, repo.resolve(repo.default_ref())).guards

    def after_push(self, repo: GitRepository, full_name: str, head: str, installation_id: int | None,
                   now: datetime | None = None) -> str | None:
        """Queue the guard check of a new default-branch head, due once pushes have paused. Returns its id."""
        settings = self.settings(repo)
        if not settings.after_push or not guard_store.guarded(self.db, full_name):
            return None
        now = now or datetime.now(UTC)
        delivery = NewDelivery(f"guards-{_key(full_name)}-{head[:12]}", EVENT, "push", full_name, installation_id,
                               json.dumps({"head": head}))
        self.enqueue_at(delivery, due=now + timedelta(minutes=settings.debounce_minutes))
        return delivery.id

    def scheduled(self, repo: GitRepository, full_name: str, installation_id: int | None, now: datetime) -> str | None:
        """The quarter-hour tick: queue the check `[guards] schedule` made due, once per due time."""
        settings = self.settings(repo)
        if settings.schedule is None or not guard_store.guarded(self.db, full_name):
            return None
        due = last_due(settings.schedule, settings.timezone, now)
        if due is None:
            return None
        delivery = NewDelivery(f"guards-{_key(full_name)}-at-{due:%Y%m%d%H%M}", EVENT, "schedule", full_name,
                               installation_id, "{}")
        self.enqueue_at(delivery)
        return delivery.id

    def check(self, repo: GitRepository, full_name: str, queued_for: str | None,
              installation_id: int | None) -> list[int]:
        """Queue one guard run per fixed record at the default head (none already measured there)."""
        head = repo.resolve(repo.default_ref())
        if queued_for is not None and queued_for != head:
            log.info("%s: guard check for %s skipped: the default branch moved on to %s", full_name, queued_for[:12],
                     head[:12])
            return []
        settings = self.settings(repo)
        options = RunOptions(runner=settings.runner or None)
        runs = []
        for slug in guard_store.guarded(self.db, full_name):
            if fix_store.has_run(self.db, full_name, slug, GUARD, head):
                continue
            try:
                read_record(repo, slug, head)
            except UserError:
                # Pruned from devs/issues and devs/fixed alike: nothing left to measure, and a failing run
                # after every push would only edit its closed issue again and again.
                log.info("%s: %s has no report at %s; its guard is retired", full_name, slug, head[:12])
                continue
            runs.append(self.fixes.request_run(full_name, slug, base=None, head=head, purpose=GUARD,
                                               installation_id=installation_id, requested_by="", options=options))
        return runs

    def regressed(self, run: BenchRun, delivery_id: str | None) -> bool:
        """A finished guard run whose claim reproduced: the record becomes `regressed`. False for anything else."""
        if run.purpose != GUARD or not run.done:
            return False
        if reproduction(run.verdict, run.measured) != "reproduced":
            return False
        detail = f"guard bench run {run.id} at {run.head[:12]}: {run.message}"
        return guard_store.mark_regressed(self.db, run.repo, run.slug, detail, delivery_id)

    def last_good(self, repo: GitRepository, full_name: str, slug: str, bad: str) -> str | None:
        """The newest commit before `bad` known to pass: a guard that held there, else the head of a merged fix."""
        held = [sha for sha, verdict in guard_store.guard_results(self.db, full_name, slug).items()
                if verdict == "pass" and sha != bad and repo.is_ancestor(sha, bad)]
        fixed = [sha for sha in guard_store.merged_fix_heads(self.db, full_name, slug) if repo.is_ancestor(sha, bad)]
        candidates = held or fixed
        if not candidates:
            return None
        # Ancestors of one commit are ordered by ancestry: the newest is the one every other is an ancestor of.
        newest = candidates[0]
        for sha in candidates[1:]:
            if repo.is_ancestor(newest, sha):
                newest = sha
        return newest


def _key(full_name: str) -> str:
    return hashlib.sha256(full_name.encode("utf-8")).hexdigest()[:12]
