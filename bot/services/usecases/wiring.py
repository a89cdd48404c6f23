"""BotServices: the use cases wired once over one Context, the single object the runtime builds and every
handler receives (`dispatch(event, services)` hands all handlers the same argument)."""
from __future__ import annotations

from typing import Callable

from bot.adapters.store.engine import Database
from bot.core.dedup.offline_reviewer import OfflineReviewer
from bot.core.tracker.outgoing import Outgoing
from bot.services.answers import Answers
from bot.services.bench.bench_flow import BenchFlow
from bot.services.bench.fix_flow import FixFlow
from bot.services.dedup.review import Reviewer
from bot.services.posting import CleanTracker
from bot.services.usecases.commands import Commands
from bot.services.usecases.context import Context, TrackerFactory
from bot.services.usecases.digests import Digests
from bot.services.usecases.fixes import Fixes
from bot.services.usecases.guards import Guards
from bot.services.usecases.lead import Lead
from bot.services.usecases.reports import Reports
from bot.services.usecases.source import RepoSource


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
        self.digests = Digests(self.context)
        self.commands = Commands(self.context, self.reports, self.guards, self.digests)
        self.lead = Lead(self.context, self.commands)
        if bench is not None:
            bench.listeners.append(Answers(db).run_changed)  # a command's answer line follows its bench runs
