"""Fixes and bench runs: pull requests attached as fixes, bench runs measured (locally, over ssh or on GitHub
Actions), records closed when a verified fix merges, and the parity of a PR's Metal/CUDA twins."""
from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import datetime

from bot.adapters.git import GitRepository
from bot.adapters.store.bench import fix_store, merge_store
from bot.adapters.store.locks import repo_lock
from bot.core.events import PullInfo, WorkflowRun
from bot.core.verify.bench_run import BenchRun
from bot.core.verify.vocabulary import Purpose, Test
from bot.parity.check import ParityReport
from bot.parity.flow import ParityFlow
from bot.services.bench.closing import close_if_verified
from bot.services.bench.fix_flow import FixFlow
from bot.services.posting import CleanTracker
from bot.services.usecases.context import Context
from bot.services.usecases.guards import Guards

log = logging.getLogger("perfbot.services")


class Fixes:
    def __init__(self, ctx: Context, guards: Guards) -> None:
        self.ctx = ctx
        self.guards = guards  # a finished guard run may mark its record regressed and start a bisection

    def _flow(self) -> FixFlow:
        if self.ctx.fixes is None:
            raise RuntimeError("this process attaches no fixes: it was built without a FixFlow")
        return self.ctx.fixes

    def pull_request_changed(self, full_name: str, pull: PullInfo, installation_id: int | None,
                             delivery_id: str | None = None) -> list[str]:
        """A PR opened, edited, pushed to or merged: its fixes attached, verified, and closed when verified."""
        db = self.ctx.db
        installation_id = self.ctx.installation(full_name, installation_id)
        tracker = self.ctx.trackers(full_name, installation_id)
        publish = self.ctx.publisher(full_name, installation_id)
        with repo_lock(db, full_name), self.ctx.source.open(full_name, installation_id) as repo:
            attached = self._flow().pull_changed(repo, full_name, pull, installation_id)  # merged: attach, never run
            slugs = {a.fix.slug for a in attached}
            if pull.merged:
                merge_store.closed(db, full_name, pull.number)
                for fix in fix_store.fixes_of_pull(db, full_name, pull.number):
                    if fix.state == fix_store.OPEN:
                        fix_store.set_state(db, fix.id, fix_store.MERGED)
                        close_if_verified(db, repo, tracker, publish, full_name, fix, pull.head_sha,
                                          pr_number=pull.number, delivery_id=delivery_id)
                        slugs.add(fix.slug)
        if slugs:
            self.ctx.mirror(tracker, full_name, slugs)
        return sorted(slugs)

    def pull_closed_unmerged(self, full_name: str, number: int) -> None:
        merge_store.closed(self.ctx.db, full_name, number)
        for fix in fix_store.fixes_of_pull(self.ctx.db, full_name, number):
            if fix.state == fix_store.OPEN:
                fix_store.set_state(self.ctx.db, fix.id, fix_store.CLOSED)

    def after_sync(self, repo: GitRepository, tracker: CleanTracker, full_name: str, touched: set[str],
                   installation_id: int | None) -> None:
        """Fix branches attached (and verified when they moved), merged ones closed if verified, new claims
        measured; then, in local mode, the branches' GPU twins checked for parity."""
        flow = self.ctx.fixes
        if flow is not None:
            publish = self.ctx.publisher(full_name, installation_id)
            attached = flow.branches_changed(repo, full_name, installation_id)
            closed = [close_if_verified(self.ctx.db, repo, tracker, publish, full_name, fix, head)
                      for fix in flow.merged_fixes(repo, full_name) if (head := fix.head_sha)]  # merged: has a head
            flow.verify_new_claims(repo, full_name, touched, installation_id)
            slugs = {a.fix.slug for a in attached} | {c.slug for c in closed}
            if slugs:
                self.ctx.mirror(tracker, full_name, slugs)
        if self.ctx.source.is_local(full_name):  # on GitHub the pull requests carry the check runs
            ParityFlow().branches_changed(repo, tracker, full_name)

    def pull_request_parity(self, full_name: str, pull: PullInfo, installation_id: int | None) -> ParityReport | None:
        installation_id = self.ctx.installation(full_name, installation_id)
        tracker = self.ctx.trackers(full_name, installation_id)
        with self.ctx.source.open(full_name, installation_id) as repo:
            return ParityFlow().pull_changed(repo, tracker, full_name, pull)

    def run_bench(self, run_id: int, full_name: str, installation_id: int | None, keep_alive: Callable[[float], object],
                  delivery_id: str | None = None) -> BenchRun | None:
        """A queued bench run, measured; a pass on the head of an already merged fix closes its record."""
        if self.ctx.bench is None:
            raise RuntimeError("this process runs no benchmarks: it was built without a BenchFlow")
        installation_id = self.ctx.installation(full_name, installation_id)
        tracker = self.ctx.trackers(full_name, installation_id)
        with self.ctx.source.open(full_name, installation_id) as repo:
            run = self.ctx.bench.run(run_id, repo, tracker, keep_alive)
            self._after_run(run, repo, tracker, full_name, installation_id, delivery_id)
        return run

    def _after_run(self, run: BenchRun | None, repo: GitRepository, tracker: CleanTracker, full_name: str,
                   installation_id: int | None, delivery_id: str | None) -> None:
        if run and run.verdict == Test.PASS and run.purpose == Purpose.FIX:
            for fix in fix_store.fixes_for(self.ctx.db, full_name, run.slug):
                if fix.state == fix_store.MERGED and fix.head_sha == run.head:
                    close_if_verified(self.ctx.db, repo, tracker, self.ctx.publisher(full_name, installation_id),
                                      full_name, fix, run.head, pr_number=fix.pr_number, delivery_id=delivery_id)
        if run is not None and run.done:
            self.guards.run_finished(run, repo, tracker, full_name, installation_id, delivery_id)
            self.ctx.mirror(tracker, full_name, {run.slug})

    def workflow_run_completed(self, full_name: str, installation_id: int | None, run_id: int,
                               workflow_run: WorkflowRun, delivery_id: str) -> BenchRun | None:
        """A `workflow_run` webhook for bench run `run_id`: only a run perfbot itself dispatched counts."""
        if self.ctx.bench is None:
            return None  # this process runs no benchmarks
        if not self.ctx.is_bot(workflow_run.actor):
            log.warning("%s: workflow run %s titled for bench run %s was started by %r, not perfbot: ignored",
                        full_name, workflow_run.id, run_id, workflow_run.actor)
            return None
        installation_id = self.ctx.installation(full_name, installation_id)
        tracker = self.ctx.trackers(full_name, installation_id)
        with self.ctx.source.open(full_name, installation_id) as repo:
            run = self.ctx.bench.actions.complete(run_id, repo, tracker, workflow_run)
            self._after_run(run, repo, tracker, full_name, installation_id, delivery_id)
        return run

    def poll_actions(self, now: datetime, delivery_id: str) -> dict[str, int]:
        """The webhook's fallback: dispatched bench runs whose workflow run ended unheard, finished now."""
        finished: dict[str, int] = {}
        bench = self.ctx.bench
        if bench is None:
            return finished
        for full_name in self.ctx.repositories():
            if not bench.actions.due(full_name, now):
                continue  # nothing dispatched: no clone fetched, no GitHub call
            installation_id = self.ctx.installation(full_name, None)
            try:
                tracker = self.ctx.trackers(full_name, installation_id)
                with self.ctx.source.open(full_name, installation_id) as repo:
                    runs = bench.actions.poll(full_name, repo, tracker, now, self.ctx.is_bot)
                    for run in runs:
                        self._after_run(run, repo, tracker, full_name, installation_id, delivery_id)
                finished[full_name] = len(runs)
            except Exception as exc:  # one repository's outage must not stop the others' polling
                log.warning("polling GitHub Actions runs of %s failed: %s", full_name, exc)
        return finished
