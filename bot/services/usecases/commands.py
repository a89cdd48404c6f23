"""Comment commands (`/perf <verb>`), each permission-checked, carried out and answered in one marked comment,
and a maintainer's close (or its undoing) by command."""
from __future__ import annotations

from bot.adapters.store import service_queries as queries
from bot.adapters.store.bench import fix_store
from bot.core.tracker import overrides
from bot.services.commands import CommandFlow, Where
from bot.services.usecases.context import Context
from bot.services.usecases.digests import Digests
from bot.services.usecases.guards import Guards
from bot.services.usecases.reports import Reports


class Commands:
    def __init__(self, ctx: Context, reports: Reports, guards: Guards, digests: Digests) -> None:
        self.ctx = ctx
        self.reports = reports  # a command that changes a record mirrors it
        self.guards = guards  # `/perf bisect`
        self.digests = digests  # `/perf digest` previews

    def flow(self, bot_name: str = "perfbot") -> CommandFlow:
        return CommandFlow(self, bot_name)

    def comment(self, where: Where, invocations: list, bot_name: str) -> None:
        """Commands in a comment: each permission-checked, carried out and answered in one marked comment."""
        self.flow(bot_name).run(where, invocations)

    def override(self, full_name: str, slug: str, closing: bool, actor: str, delivery_id: str,
                 reason: str) -> int | None:
        """A maintainer's close (or its undoing) by command: the same logged override as closing the issue."""
        record = fix_store.open_records(self.ctx.db, full_name).get(slug)
        change = overrides.decide(record.state if record else "", "closed" if closing else "reopened")
        if record is None or change.event is None:
            return None
        queries.apply_person_change(self.ctx.db, record.record_id, change.new_state, change.event, actor, delivery_id,
                                    change.restore_body, reason)
        return record.record_id
