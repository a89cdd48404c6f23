"""Commands: `/perf <verb>` in a comment and boxes ticked on the dashboard, each permission-checked, carried out
and answered in one marked comment."""
from __future__ import annotations

from bot.adapters.store.lead import notice_store
from bot.adapters.store.locks import repo_lock
from bot.core import refusals
from bot.core.events import Where
from bot.core.lead.dashboard import VERBS, newly_ticked
from bot.errors import NotAllowed
from bot.services.commands import WRITE_LEVELS, CommandFlow
from bot.services.usecases.context import Context
from bot.services.usecases.guards import Guards
from bot.services.usecases.lead import Lead
from bot.services.usecases.reports import Reports

ANSWER_MARKER = "<!-- perfbot:dashboard-answer -->"


class Commands:
    def __init__(self, ctx: Context, reports: Reports, guards: Guards, lead: Lead) -> None:
        self.ctx = ctx
        self.reports = reports  # a command that changes a record mirrors it
        self.guards = guards  # `/perf bisect`
        self.lead = lead  # `/perf digest` previews; the dashboard re-drawn after its boxes are carried out

    def _flow(self, bot_name: str = "perfbot") -> CommandFlow:
        return CommandFlow(self.ctx, self.reports, self.guards, self.lead, bot_name)

    def comment(self, where: Where, invocations: list, bot_name: str) -> None:
        """Commands in a comment: each permission-checked, carried out and answered in one marked comment."""
        self._flow(bot_name).run(where, invocations)

    def dashboard_edited(self, full_name: str, number: int, before: str, after: str, actor: str,
                         installation_id: int | None, delivery_id: str) -> list[str]:
        """A person edited the dashboard: each newly ticked box carried out if they may write, refused (and
        explained) if not; the body is re-drawn either way, which unticks every box."""
        row = notice_store.dashboard_row(self.ctx.db, full_name)
        if row is None or row[0] != number:
            return []  # only the dashboard perfbot opened, by its stored number: a look-alike's boxes do nothing
        installation_id = self.ctx.installation(full_name, installation_id)
        tracker = self.ctx.trackers(full_name, installation_id)
        ticked = newly_ticked(before, after)
        lines: list[str] = []
        if ticked:
            level = tracker.permission(actor)
            where = Where(full_name, number, False, 0, actor, installation_id, delivery_id)
            flow = self._flow()
            for action in ticked:
                if level not in WRITE_LEVELS:
                    refused = NotAllowed(f"only people with write access act from this dashboard; @{actor} has "
                                         f"{level}. I unticked the box", "ask a maintainer", rule="write access")
                    lines.append(f"**{VERBS[action.verb]}** `{action.slug}`: {refusals.comment(refused)}")
                else:
                    lines.append(f"**{VERBS[action.verb]}** `{action.slug}` (ticked by @{actor}): "
                                 f"{flow.act_on_box(where, action.verb, action.slug)}")
            # Found or created under one lock: two edits of the dashboard at once must not each post an answer.
            with repo_lock(self.ctx.db, f"{full_name} answers dashboard"):
                tracker.upsert_comment(number, ANSWER_MARKER, "\n".join([ANSWER_MARKER, *lines]) + "\n", None)
        self.lead.refresh_dashboard(full_name, installation_id, force=True)
        return lines
