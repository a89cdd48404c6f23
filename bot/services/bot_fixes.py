"""BotServices' fix work: pull requests attached as fixes, bench runs measured (locally, over ssh or on GitHub
Actions), and records closed when a verified fix merges."""
from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import datetime

from bot.adapters.store import service_queries as queries
from bot.adapters.store.bench import fix_store, merge_store
from bot.adapters.store.locks import repo_lock
from bot.services.bench.closing import close_if_verified
from bot.services.bench.fix_flow import PullInfo

log = logging.getLogger("perfbot.services")


class FixWork:
    """Mixed into BotServices: uses its db, trackers, source, fixes, bench, is_bot and _mirror."""

    def pull_request_changed(self, full_name: str, pull: PullInfo, installation_id: int | None,
                             delivery_id: str | None = None) -> list[str]:
        """A PR opened, edited, pushed to or merged: its fixes attached, verified, and closed when verified."""
        installation_id = installation_id or queries.installation_for(self.db, full_name)
        tracker = self.trackers(full_name, installation_id)
        publish = lambda branch: self.source.publish(full_name, installation_id, branch)  # noqa: E731
        with repo_lock(self.db, full_name), self.source.open(full_name, installation_id) as repo:
            attached = self.fixes.pull_changed(repo, full_name, pull, installation_id)  # merged: attach, never run
            slugs = {a.fix.slug for a in attached}
            if pull.merged:
                merge_store.closed(self.db, full_name, pull.number)
                for fix in fix_store.fixes_of_pull(self.db, full_name, pull.number):
                    if fix.state == fix_store.OPEN:
                        fix_store.set_state(self.db, fix.id, fix_store.MERGED)
                        close_if_verified(self.db, repo, tracker, publish, full_name, fix, pull.head_sha,
                                          pr_number=pull.number, delivery_id=delivery_id)
                        slugs.add(fix.slug)
        if slugs:
            self._mirror(tracker, full_name, slugs)
        return sorted(slugs)

    def pull_closed_unmerged(self, full_name: str, number: int) -> None:
        merge_store.closed(self.db, full_name, number)
        for fix in fix_store.fixes_of_pull(self.db, full_name, number):
            if fix.state == fix_store.OPEN:
                fix_store.set_state(self.db, fix.id, fix_store.CLOSED)

    def run_bench(self, run_id: int, full_name: str, installation_id: int | None, keep_alive: Callable[[float], object],
                  delivery_id: str | None = None) -> dict | None:
        """A queued bench run, measured; a pass on the head of an already merged fix closes its record."""
        installation_id = installation_id or queries.installation_for(self.db, full_name)
        tracker = self.trackers(full_name, installation_id)
        with self.source.open(full_name, installation_id) as repo:
            run = self.bench.run(run_id, repo, tracker, keep_alive)
            self._after_run(run, repo, tracker, full_name, installation_id, delivery_id)
        return run

    def _after_run(self, run: dict | None, repo, tracker, full_name: str, installation_id: int | None,
                   delivery_id: str | None) -> None:
        if run and run["verdict"] == "pass" and run["purpose"] == "fix":
            for fix in fix_store.fixes_for(self.db, full_name, run["slug"]):
                if fix.state == fix_store.MERGED and fix.head_sha == run["head"]:
                    close_if_verified(self.db, repo, tracker, lambda branch: self.source.publish(
                        full_name, installation_id, branch), full_name, fix, run["head"],
                        pr_number=fix.pr_number, delivery_id=delivery_id)
        if run is not None and run["status"] == "done":
            self._guard_finished(run, repo, tracker, full_name, installation_id, delivery_id)
            self._mirror(tracker, full_name, {run["slug"]})

    def workflow_run_completed(self, full_name: str, installation_id: int | None, run_id: int, workflow_run: dict,
                               delivery_id: str) -> dict | None:
        """A `workflow_run` webhook for bench run `run_id`: only a run perfbot itself dispatched counts."""
        if self.bench is None:
            return None  # this process runs no benchmarks
        if not self.is_bot(workflow_run.get("actor", "")):
            log.warning("%s: workflow run %s titled for bench run %s was started by %r, not perfbot: ignored",
                        full_name, workflow_run.get("id"), run_id, workflow_run.get("actor"))
            return None
        from bot.adapters.github.actions import WorkflowRun

        installation_id = installation_id or queries.installation_for(self.db, full_name)
        tracker = self.trackers(full_name, installation_id)
        with self.source.open(full_name, installation_id) as repo:
            run = self.bench.actions.complete(run_id, repo, tracker, WorkflowRun(**workflow_run))
            self._after_run(run, repo, tracker, full_name, installation_id, delivery_id)
        return run

    def poll_actions(self, now: datetime, delivery_id: str) -> dict[str, int]:
        """The webhook's fallback: dispatched bench runs whose workflow run ended unheard, finished now."""
        finished: dict[str, int] = {}
        for full_name in sorted(set(queries.repo_keys(self.db)) | set(self.source.known())) if self.bench else ():
            if not self.bench.actions.due(full_name, now):
                continue  # nothing dispatched: no clone fetched, no GitHub call
            installation_id = queries.installation_for(self.db, full_name)
            try:
                tracker = self.trackers(full_name, installation_id)
                with self.source.open(full_name, installation_id) as repo:
                    runs = self.bench.actions.poll(full_name, repo, tracker, now, self.is_bot)
                    for run in runs:
                        self._after_run(run, repo, tracker, full_name, installation_id, delivery_id)
                finished[full_name] = len(runs)
            except Exception as exc:  # one repository's outage must not stop the others' polling
                log.warning("polling GitHub Actions runs of %s failed: %s", full_name, exc)
        return finished
