"""What every use case may depend on.

The Context is built once by the runtime and never changed: the store, each repository's
issue tracker, where commits come from, the reviewer, the fix and bench flows, and who perfbot is."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from bot.adapters.store import service_queries as queries
from bot.adapters.store.engine import Database
from bot.adapters.store.locks import repo_lock
from bot.services.bench.bench_flow import BenchFlow
from bot.services.bench.fix_flow import FixFlow
from bot.services.dedup.review import Reviewer
from bot.services.posting import CleanTracker
from bot.services.reports.mirror import IssueTracker, MirrorSummary, mirror_repo
from bot.services.usecases.source import RepoSource

# (full_name, installation id) -> the issue tracker of that repository
TrackerFactory = Callable[[str, int | None], IssueTracker]


@dataclass(frozen=True)
class Context:
    db: Database
    trackers: Callable[[str, int | None], CleanTracker]  # every text leaves scrubbed and within GitHub's limits
    source: RepoSource
    reviewer: Reviewer
    bot_login: str
    file_url: Callable[[str], str]
    own_login: Callable[[], str] | None = None  # GitHub's answer to who perfbot is; None in local mode
    fixes: FixFlow | None = None  # None: this process attaches no fixes and runs no benchmarks (tests of other flows)
    bench: BenchFlow | None = None

    def installation(self, full_name: str, installation_id: int | None) -> int | None:
        """The event's installation, else the one last stored for the repository (schedules carry none)."""
        return installation_id or queries.installation_for(self.db, full_name)

    def tracker(self, full_name: str, installation_id: int | None) -> CleanTracker:
        return self.trackers(full_name, self.installation(full_name, installation_id))

    def publisher(self, full_name: str, installation_id: int | None) -> Callable[[str], None]:
        return lambda branch: self.source.publish(full_name, installation_id, branch)

    def repositories(self) -> list[str]:
        """Every repository the store knows or the source watches, for the schedules that visit them all."""
        return sorted(set(queries.full_names(self.db)) | set(self.source.known()))

    def is_bot(self, login: str) -> bool:
        """Our own writes echo back as events: perfbot writes as the App's `<slug>[bot]` or the token's user."""
        if not login:
            return False
        try:
            own = self.own_login() if self.own_login is not None else None
        except Exception:  # GitHub cannot say now: the configured login still tells our own echoes apart
            own = None
        return login.lower() in {self.bot_login.lower(), (own or "").lower()} - {""}

    def mirror(self, tracker: IssueTracker, full_name: str, slugs: set[str] | None) -> MirrorSummary:
        # One writer per repository across workers: two mirroring one new record would open two issues.
        with repo_lock(self.db, full_name):
            return mirror_repo(self.db, tracker, full_name, slugs, file_url=self.file_url(full_name))
