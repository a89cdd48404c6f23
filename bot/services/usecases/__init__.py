"""The use cases handlers call, each a class whose dependencies are its constructor's arguments: Reports,
Fixes, Guards, Lead and Commands over one frozen Context. BotServices builds them once; it stays as their
container because `dispatch(event, services)` hands every handler the same one argument."""
from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

from bot.adapters.store.engine import Database
from bot.adapters.store.locks import kept_for
from bot.core.dedup.offline_reviewer import OfflineReviewer
from bot.core.tracker.outgoing import Outgoing
from bot.services.bench.bench_flow import BenchFlow
from bot.services.bench.fix_flow import FixFlow
from bot.services.dedup.review import Reviewer
from bot.services.posting import CleanTracker
from bot.services.usecases.commands import Commands
from bot.services.usecases.context import Context, TrackerFactory
from bot.services.usecases.fixes import Fixes
from bot.services.usecases.guards import Guards
from bot.services.usecases.lead import Lead
from bot.services.usecases.reports import Reports
from bot.services.usecases.source import NotWatched, RepoSource

__all__ = ["BotServices", "Commands", "Context", "Fixes", "Guards", "Lead", "NotWatched", "RepoSource", "Reports",
           "TrackerFactory"]


class BotServices:
    def __init__(self, db: Database, trackers: TrackerFactory, source: RepoSource, *, bot_login: str,
                 file_url: Callable[[str], str] = lambda full_name: "",
                 own_login: Callable[[], str] | None = None, reviewer: Reviewer | None = None,
                 fixes: FixFlow | None = None, bench: BenchFlow | None = None,
                 outgoing: Outgoing = Outgoing()) -> None:
        def clean(full_name: str, installation: int | None) -> CleanTracker:
            return CleanTracker(trackers(full_name, installation), outgoing)

        self.context = Context(db, clean, source, reviewer or OfflineReviewer(), bot_login, file_url,
                               own_login=own_login, fixes=fixes, bench=bench)
        self.guards = Guards(self.context)
        self.fixes = Fixes(self.context, self.guards)
        self.reports = Reports(self.context, self.fixes)
        self.lead = Lead(self.context)
        self.commands = Commands(self.context, self.reports, self.guards, self.lead)
    @contextmanager
    def delivery(self, full_name: str | None) -> Iterator[None]:
        """One delivery's repository session, around its handlers (`Runtime._dispatch`): each repository it opens
        is fetched once (and its clone shared), and the lock of its own repository is taken once. Handlers run
        without it (the CLI, tests) still work: each open fetches and each use case locks, as on their own."""
        with self.context.source.session(), kept_for(full_name):
            yield
