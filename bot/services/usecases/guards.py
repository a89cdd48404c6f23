"""Regression guards: fixed records measured again after pushes or on a schedule, a regression reopening its
record, and bisections (started by a regressed guard or by `/perf bisect`)."""
from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import datetime

from bot.adapters.git import GitError, GitRepository
from bot.adapters.store.bench import fix_store
from bot.bisect.flow import BisectFlow
from bot.core import refusals
from bot.core.verify.bench_run import BenchRun
from bot.errors import Invalid, NotConfigured, NotFound, UserError
from bot.services.bench.guard_flow import GuardFlow
from bot.services.posting import CleanTracker
from bot.services.usecases.context import Context

log = logging.getLogger("perfbot.services")


class Guards:
    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        # None: this process queues no bench runs (or, for bisections, runs none)
        self.flow = GuardFlow(ctx.db, ctx.fixes, ctx.fixes.enqueue) if ctx.fixes is not None else None
        self.bisections = (BisectFlow(ctx.db, ctx.bench, ctx.fixes.enqueue)
                           if ctx.fixes is not None and ctx.bench is not None else None)

    def after_push(self, full_name: str, head: str, installation_id: int | None) -> str | None:
        if self.flow is None:
            return None
        installation_id = self.ctx.installation(full_name, installation_id)
        with self.ctx.source.open(full_name, installation_id) as repo:
            return self.flow.after_push(repo, full_name, head, installation_id)

    def schedule(self, now: datetime) -> dict[str, str]:
        """The quarter-hour tick: each repository whose `[guards] schedule` is due gets its check queued."""
        queued: dict[str, str] = {}
        if self.flow is None:
            return queued
        for full_name in self.ctx.repositories():
            try:
                installation_id = self.ctx.installation(full_name, None)
                with self.ctx.source.open(full_name, installation_id) as repo:
                    found = self.flow.scheduled(repo, full_name, installation_id, now)
                if found:
                    queued[full_name] = found
            except Exception as exc:  # one repository's outage must not stop the others' guards
                log.warning("scheduling the guards of %s failed: %s", full_name, exc)
        return queued

    def check(self, full_name: str, queued_for: str | None, installation_id: int | None) -> list[int]:
        if self.flow is None:
            return []
        installation_id = self.ctx.installation(full_name, installation_id)
        with self.ctx.source.open(full_name, installation_id) as repo:
            return self.flow.check(repo, full_name, queued_for, installation_id)

    def run_finished(self, run: BenchRun, repo: GitRepository, tracker: CleanTracker, full_name: str,
                     installation_id: int | None, delivery_id: str | None) -> int | None:
        """A guard run ended: a claim back means `regressed` (the issue reopens) and, by default, a bisection."""
        if self.flow is None or not self.flow.regressed(run, delivery_id):
            return None
        self.ctx.mirror(tracker, full_name, {run.slug})
        settings = self.flow.settings(repo)
        good = self.flow.last_good(repo, full_name, run.slug, run.head)
        if not settings.bisect or good is None or self.bisections is None:
            log.info("%s: %s regressed at %s; no bisection (%s)", full_name, run.slug, run.head[:12],
                     "off in [guards]" if not settings.bisect else "no passing commit known")
            return None
        try:
            return self.bisections.start(repo, full_name, run.slug, good, run.head, requested_by="",
                                         installation_id=installation_id)
        except UserError as exc:
            log.warning("%s: %s regressed; bisection not started: %s", full_name, run.slug, refusals.log_line(exc))
            return None

    def request_bisection(self, full_name: str, slug: str, good: str | None, bad: str | None, requested_by: str,
                          installation_id: int | None, options: dict | None = None) -> int:
        """`/perf bisect SLUG [good..bad]`: without a side, the last passing commit and the default head."""
        if self.bisections is None or self.flow is None:
            raise NotConfigured("this perfbot runs no benchmarks, so it cannot bisect", key="[[runners]]",
                                owner="operator")
        installation_id = self.ctx.installation(full_name, installation_id)
        if fix_store.record_standing(self.ctx.db, full_name, slug) is None:
            raise NotFound(f"`{slug}` is not a report here", "`/perf status` lists what this thread knows", name=slug)
        with self.ctx.source.open(full_name, installation_id) as repo:
            try:
                bad = repo.resolve(bad or repo.default_ref())
            except GitError as exc:
                raise Invalid(f"cannot bisect {slug}: {exc}",
                              f"name a range, e.g. `/perf bisect {slug} v1.2..main`") from None
            good = good or self.flow.last_good(repo, full_name, slug, bad)
            if good is None:
                raise NotFound(f"no passing commit of `{slug}` is known (no guard held, no fix merged)",
                               f"name one, e.g. `/perf bisect {slug} v1.2..main`")
            return self.bisections.start(repo, full_name, slug, good, bad, requested_by=requested_by,
                                         installation_id=installation_id, options=options)

    def run_bisection(self, bisect_id: int, full_name: str, installation_id: int | None,
                      keep_alive: Callable[[float], object]) -> dict | None:
        if self.bisections is None:
            return None
        installation_id = self.ctx.installation(full_name, installation_id)
        tracker = self.ctx.trackers(full_name, installation_id)
        with self.ctx.source.open(full_name, installation_id) as repo:
            return self.bisections.run(bisect_id, repo, tracker, keep_alive)
