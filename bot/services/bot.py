"""The use cases handlers call: sync and mirror a push, remember installations, react to people on issues."""
from __future__ import annotations

import logging
from datetime import datetime
from contextlib import contextmanager
from pathlib import Path
from typing import Callable, Iterator

from bot.adapters.git import GitRepository
from bot.adapters.store import service_queries as queries
from bot.adapters.store.engine import Database
from bot.adapters.store.dedup_store import remember_not_duplicate
from bot.adapters.store.mirror_queries import flagged_partners, record_by_issue
from bot.core import overrides
from bot.errors import TransientError
from bot.core.offline_reviewer import OfflineReviewer
from bot.adapters.store import fix_store
from bot.services.answers import Answers
from bot.services.bench_flow import BenchFlow
from bot.services.commands import CommandFlow, Where
from bot.services.digest_flow import DigestFlow
from bot.services.closing import close_if_verified
from bot.services.dedup import Reviewer
from bot.services.fix_flow import FixFlow, PullInfo
from bot.services.dedup_flow import audit_changed, comment_on_issues, propose_merges, review_changed
from bot.services.mirror import IssueTracker, MirrorSummary, mirror_repo
from bot.services.sync import SyncSummary, sync

log = logging.getLogger("perfbot.services")

# (full_name, installation id) -> the issue tracker of that repository
TrackerFactory = Callable[[str, int | None], IssueTracker]


class RepoSource:
    """Where a repository's commits come from: a bare clone fetched from GitHub, or a local path."""

    def __init__(self, fetch: Callable[[str, int | None], Path] | None = None,
                 local: dict[str, Path] | None = None,
                 push: Callable[[str, int | None, str], None] | None = None) -> None:
        self._fetch = fetch
        self._local = local or {}
        self._push = push

    @contextmanager
    def open(self, full_name: str, installation_id: int | None) -> Iterator[GitRepository]:
        if full_name in self._local:
            path = self._local[full_name]
        elif self._fetch is not None:
            path = self._fetch(full_name, installation_id)
        else:
            raise TransientError(f"no source for {full_name}: not a watched local repository")
        repo = GitRepository(path, key=full_name)
        try:
            yield repo
        finally:
            repo.close()

    def known(self) -> list[str]:
        return sorted(self._local)

    def is_local(self, full_name: str) -> bool:
        return full_name in self._local

    def publish(self, full_name: str, installation_id: int | None, branch: str) -> None:
        """Make a bot branch visible where people review it: pushed to GitHub; local branches already are."""
        if not self.is_local(full_name) and self._push is not None:
            self._push(full_name, installation_id, branch)


class BotServices:
    def __init__(self, db: Database, trackers: TrackerFactory, source: RepoSource, *, bot_login: str,
                 file_url: Callable[[str], str] = lambda full_name: "",
                 token_login: Callable[[], str | None] = lambda: None, reviewer: Reviewer | None = None,
                 fixes: FixFlow | None = None, bench: BenchFlow | None = None) -> None:
        self.db = db
        self.trackers = trackers
        self.source = source
        self.bot_login = bot_login
        self.file_url = file_url
        self.token_login = token_login
        self.reviewer = reviewer or OfflineReviewer()
        self.fixes = fixes  # None: this process attaches no fixes and runs no benchmarks (tests of other flows)
        self.bench = bench
        if bench is not None:
            bench.listeners.append(Answers(db).run_changed)  # a command's answer line follows its bench runs

    def is_bot(self, login: str) -> bool:
        """Our own writes echo back as events; with a personal token, perfbot writes as that token's user."""
        return bool(login) and login in (self.bot_login, self.token_login())

    def sync_and_mirror(self, full_name: str, after: str | None, installation_id: int | None) -> tuple[SyncSummary, MirrorSummary]:
        """Sync up to `after` (default: the default branch), review what changed for overlaps, mirror, comment."""
        installation_id = installation_id or queries.installation_for(self.db, full_name)
        tracker = self.trackers(full_name, installation_id)
        outcomes = []
        with self.source.open(full_name, installation_id) as repo:
            # A local repository is small and new to its user: its first sync tells its whole story.
            summary = sync(self.db, repo, ref=after, history_on_first_sync=self.source.is_local(full_name))
            reviews = review_changed(self.db, full_name, summary.touched, self.reviewer)
            audit_changed(self.db, full_name, summary.touched, self.reviewer)
            partners = {r.old for r in reviews}
            # Issues first (their labels already show the verdicts), so the PR and comments can point at them.
            mirrored = mirror_repo(self.db, tracker, full_name, summary.touched | partners,
                                   file_url=self.file_url(full_name))
            if reviews:
                outcomes = propose_merges(reviews, repo, tracker, lambda branch: self.source.publish(
                    full_name, installation_id, branch), repo.default_ref())
            if self.fixes is not None:
                self._follow_fixes(repo, tracker, full_name, summary.touched, installation_id)
        if outcomes:
            comment_on_issues(self.db, full_name, tracker, outcomes)
        log.info("%s: sync %s, mirror %s, %d overlap(s)", full_name, dict(summary.counts), dict(mirrored.counts),
                 len(outcomes))
        return summary, mirrored

    def _follow_fixes(self, repo: GitRepository, tracker, full_name: str, touched: set[str],
                      installation_id: int | None) -> None:
        """After a sync: fix branches attached (and verified when they moved), merged ones closed if verified,
        new claims measured."""
        publish = lambda branch: self.source.publish(full_name, installation_id, branch)  # noqa: E731
        attached = self.fixes.branches_changed(repo, full_name, installation_id)
        closed = [close_if_verified(self.db, repo, tracker, publish, full_name, fix, fix.head_sha)
                  for fix in self.fixes.merged_fixes(repo, full_name)]
        self.fixes.verify_new_claims(repo, full_name, touched, installation_id)
        slugs = {a.fix.slug for a in attached} | {c.slug for c in closed}
        if slugs:
            mirror_repo(self.db, tracker, full_name, slugs, file_url=self.file_url(full_name))

    def pull_request_changed(self, full_name: str, pull: PullInfo, installation_id: int | None,
                             delivery_id: str | None = None) -> list[str]:
        """A PR opened, edited, pushed to or merged: its fixes attached, verified, and closed when verified."""
        installation_id = installation_id or queries.installation_for(self.db, full_name)
        tracker = self.trackers(full_name, installation_id)
        publish = lambda branch: self.source.publish(full_name, installation_id, branch)  # noqa: E731
        with self.source.open(full_name, installation_id) as repo:
            attached = self.fixes.pull_changed(repo, full_name, pull, installation_id)  # merged: attach, never run
            slugs = {a.fix.slug for a in attached}
            if pull.merged:
                for fix in fix_store.fixes_of_pull(self.db, full_name, pull.number):
                    if fix.state == fix_store.OPEN:
                        fix_store.set_state(self.db, fix.id, fix_store.MERGED)
                        close_if_verified(self.db, repo, tracker, publish, full_name, fix, pull.head_sha,
                                          pr_number=pull.number, delivery_id=delivery_id)
                        slugs.add(fix.slug)
        if slugs:
            mirror_repo(self.db, tracker, full_name, slugs, file_url=self.file_url(full_name))
        return sorted(slugs)

    def pull_closed_unmerged(self, full_name: str, number: int) -> None:
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
            mirror_repo(self.db, tracker, full_name, {run["slug"]}, file_url=self.file_url(full_name))

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

    def post_due_digests(self, now: datetime) -> dict[str, str]:
        """Every repository whose `[digest]` schedule has passed without this week's digest gets it now."""
        outcome: dict[str, str] = {}
        for full_name in sorted(set(queries.repo_keys(self.db)) | set(self.source.known())):
            try:
                posted = self.post_digest(full_name, None, now, only_if_due=True)
                outcome[full_name] = f"posted {posted['week']}" if posted else "nothing due"
            except Exception as exc:  # one repository's broken config or outage must not stop the others'
                log.warning("digest of %s failed: %s", full_name, exc)
                outcome[full_name] = f"failed: {exc}"
        return outcome

    def post_digest(self, full_name: str, installation_id: int | None, now: datetime, *, only_if_due: bool = False,
                    since: datetime | None = None) -> dict | None:
        """The weekly digest as an issue: when due (the hourly reconcile), or now (`perfbot digest`)."""
        installation_id = installation_id or queries.installation_for(self.db, full_name)
        tracker = self.trackers(full_name, installation_id)
        digests = DigestFlow(self.db)
        with self.source.open(full_name, installation_id) as repo:
            if only_if_due:
                return digests.post_if_due(repo, tracker, full_name, now)
            return digests.post(tracker, full_name, digests.config(repo), now, since)

    def preview_digest(self, full_name: str, installation_id: int | None, now: datetime,
                       since: datetime | None = None) -> str:
        with self.source.open(full_name, installation_id) as repo:
            return DigestFlow(self.db).preview(repo, full_name, now, since)

    def command_comment(self, where: Where, invocations: list, bot_name: str) -> None:
        """Commands in a comment: each permission-checked, carried out and answered in one marked comment."""
        CommandFlow(self, bot_name).run(where, invocations)

    def override(self, full_name: str, slug: str, closing: bool, actor: str, delivery_id: str,
                 reason: str) -> int | None:
        """A maintainer's close (or its undoing) by command: the same logged override as closing the issue."""
        record = fix_store.open_records(self.db, full_name).get(slug)
        change = overrides.decide(record.state if record else "", "closed" if closing else "reopened")
        if record is None or change.event is None:
            return None
        queries.apply_person_change(self.db, record.record_id, change.new_state, change.event, actor, delivery_id,
                                    change.restore_body, reason)
        return record.record_id

    def mirror(self, full_name: str, installation_id: int | None, slugs: set[str] | None) -> MirrorSummary:
        tracker = self.trackers(full_name, installation_id or queries.installation_for(self.db, full_name))
        return mirror_repo(self.db, tracker, full_name, slugs, file_url=self.file_url(full_name))

    def reconcile(self) -> dict[str, str]:
        """Re-sync every known repository from git and re-check every issue, so a missed push heals itself."""
        outcome: dict[str, str] = {}
        for full_name in sorted(set(queries.repo_keys(self.db)) | set(self.source.known())):
            try:
                summary, _ = self.sync_and_mirror(full_name, None, None)
                self.mirror(full_name, None, None)
                outcome[full_name] = summary.mode
            except Exception as exc:  # one repository's outage must not stop the others' reconcile
                log.warning("reconcile of %s failed: %s", full_name, exc)
                outcome[full_name] = f"failed: {exc}"
        return outcome

    def record_installation(self, installation_id: int, account: str, repos: list[str], *, active: bool) -> None:
        queries.save_installation(self.db, installation_id, account, repos, active)

    def update_installation_repos(self, installation_id: int, account: str, added: list[str],
                                  removed: list[str]) -> None:
        queries.change_installation_repos(self.db, installation_id, account, added, removed)

    def issue_changed_by_person(self, full_name: str, number: int, action: str, actor: str, delivery_id: str) -> None:
        found = record_by_issue(self.db, full_name, number)
        if found is None:
            return  # not an issue perfbot mirrors
        record_id, slug, state = found
        change = overrides.decide(state, action)
        if change.event is None:
            return
        queries.apply_person_change(self.db, record_id, change.new_state, change.event, actor, delivery_id,
                                    change.restore_body)
        self.mirror(full_name, None, {slug})

    def overrule_dedup(self, full_name: str, number: int, actor: str) -> set[str]:
        """A person says the issue's record is not a duplicate: remember it for every pair it is flagged in."""
        found = record_by_issue(self.db, full_name, number)
        if found is None:
            return set()
        _, slug, _ = found
        partners = flagged_partners(self.db, full_name, slug)
        for partner in partners:
            remember_not_duplicate(self.db, full_name, slug, partner, actor)
        if partners:
            self.mirror(full_name, None, {slug, *partners})
        return partners
