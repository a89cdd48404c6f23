"""The use cases handlers call: sync and mirror a push, remember installations, react to people on issues;
fixes and bench runs (bot_fixes.py), regression guards and bisections (bot_guards.py), digests and commands
(bot_reporting.py), the dashboard issue and notices (bot_lead.py) join them as mixins."""
from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from bot.adapters.git import GitRepository
from bot.adapters.store import service_queries as queries
from bot.adapters.store.bench import merge_store
from bot.adapters.store.engine import Database
from bot.adapters.store.locks import repo_lock
from bot.adapters.store.mirror_queries import flagged_partners, record_by_issue
from bot.adapters.store.reviews.dedup_store import remember_not_duplicate
from bot.core.dedup.offline_reviewer import OfflineReviewer
from bot.core.tracker import overrides
from bot.core.tracker.outgoing import Outgoing
from bot.services.answers import Answers
from bot.services.bench.bench_flow import BenchFlow
from bot.services.bench.closing import close_if_verified
from bot.services.bench.fix_flow import FixFlow
from bot.services.bot_fixes import FixWork
from bot.services.bot_guards import GuardWork
from bot.services.bot_lead import LeadView
from bot.services.bot_parity import ParityWork
from bot.services.bot_reporting import Reporting
from bot.services.dedup.dedup_flow import audit_changed, comment_on_issues, propose_merges, review_changed
from bot.services.dedup.live_index import LiveIndexes
from bot.services.dedup.review import Reviewer
from bot.services.posting import CleanTracker
from bot.services.reports.fact_review import fact_review_for
from bot.services.reports.mirror import IssueTracker, MirrorSummary, mirror_repo
from bot.services.reports.sync import SyncSummary, sync

log = logging.getLogger("perfbot.services")

# (full_name, installation id) -> the issue tracker of that repository
TrackerFactory = Callable[[str, int | None], IssueTracker]


class NotWatched(Exception):
    """An event for a repository a local-mode server has no source for: failed at once, never retried."""


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
            # Not transient: retrying cannot make an unwatched repository appear, it only repeats the failure.
            watched = ", ".join(self.known()) or "none"
            raise NotWatched(f"no source for {full_name}: this local-mode server watches {watched}; "
                             f"serve with `perfbot serve --repo PATH` on a checkout of {full_name} to follow it")
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


class BotServices(FixWork, GuardWork, Reporting, ParityWork, LeadView):
    def __init__(self, db: Database, trackers: TrackerFactory, source: RepoSource, *, bot_login: str,
                 file_url: Callable[[str], str] = lambda full_name: "",
                 own_login: Callable[[], str] | None = None, reviewer: Reviewer | None = None,
                 fixes: FixFlow | None = None, bench: BenchFlow | None = None,
                 outgoing: Outgoing = Outgoing()) -> None:
        self.db = db
        # Every text a tracker is given leaves scrubbed of secrets and within GitHub's size limits.
        self.trackers = lambda full_name, installation: CleanTracker(trackers(full_name, installation), outgoing)
        self.source = source
        self.bot_login = bot_login
        self.file_url = file_url
        self.own_login = own_login  # GitHub's answer to who perfbot is; None in local mode
        self.reviewer = reviewer or OfflineReviewer()
        self.fixes = fixes  # None: this process attaches no fixes and runs no benchmarks (tests of other flows)
        self.bench = bench
        self.indexes = LiveIndexes()  # retrieval, kept in step with the store push by push
        if bench is not None:
            bench.listeners.append(Answers(db).run_changed)  # a command's answer line follows its bench runs

    def is_bot(self, login: str) -> bool:
        """Our own writes echo back as events: perfbot writes as the App's `<slug>[bot]` or the token's user."""
        if not login:
            return False
        try:
            own = self.own_login() if self.own_login is not None else None
        except Exception:  # GitHub cannot say now: the configured login still tells our own echoes apart
            own = None
        return login.lower() in {self.bot_login.lower(), (own or "").lower()} - {""}

    def sync_and_mirror(self, full_name: str, after: str | None,
                        installation_id: int | None) -> tuple[SyncSummary, MirrorSummary]:
        """Sync up to `after` (default: the default branch), review what changed for overlaps, mirror, comment."""
        installation_id = installation_id or queries.installation_for(self.db, full_name)
        tracker = self.trackers(full_name, installation_id)
        outcomes = []
        with repo_lock(self.db, full_name), self.source.open(full_name, installation_id) as repo:
            # A local repository is small and new to its user: its first sync tells its whole story.
            summary = sync(self.db, repo, ref=after, history_on_first_sync=self.source.is_local(full_name),
                           facts=fact_review_for(self.reviewer, self.db))
            reviews = review_changed(self.db, full_name, summary.touched, self.reviewer, self.indexes,
                                     summary.reading)
            audit_changed(self.db, full_name, summary.touched, self.reviewer, summary.reading)
            partners = {r.old for r in reviews}
            # Issues first (their labels already show the verdicts), so the PR and comments can point at them.
            mirrored = self._mirror(tracker, full_name, summary.touched | partners)
            if reviews:
                outcomes = propose_merges(reviews, repo, tracker, lambda branch: self.source.publish(
                    full_name, installation_id, branch), repo.default_ref())
                for outcome in (o for o in outcomes if o.pull):
                    review = outcome.review
                    merge_store.opened(self.db, full_name, outcome.pull, review.new, review.old,
                                       f"Merge {review.old} into {review.new}", review.verdict.reviewer)
            if self.fixes is not None:
                self._follow_fixes(repo, tracker, full_name, summary.touched, installation_id)
            self._branches_parity(repo, tracker, full_name)
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
            self._mirror(tracker, full_name, slugs)

    def mirror(self, full_name: str, installation_id: int | None, slugs: set[str] | None) -> MirrorSummary:
        tracker = self.trackers(full_name, installation_id or queries.installation_for(self.db, full_name))
        return self._mirror(tracker, full_name, slugs)

    def _mirror(self, tracker, full_name: str, slugs: set[str] | None) -> MirrorSummary:
        # One writer per repository across workers: two mirroring one new record would open two issues.
        with repo_lock(self.db, full_name):
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
