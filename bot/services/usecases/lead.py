"""The lead's view: the campaign dashboard issue re-drawn after changes, its ticked boxes carried out, and
notices sent on to the optional outgoing webhook."""
from __future__ import annotations

import logging
from datetime import datetime, timezone

from bot.adapters import outgoing_webhook
from bot.adapters.store.lead import notice_store
from bot.adapters.store.locks import repo_lock
from bot.core.lead.dashboard import VERBS, newly_ticked
from bot.services.commands import WRITE_LEVELS, Where
from bot.services.lead.dashboard_flow import DashboardFlow
from bot.services.usecases.commands import Commands
from bot.services.usecases.context import Context

log = logging.getLogger("perfbot.services")
ANSWER_MARKER = "<!-- perfbot:dashboard-answer -->"


class Lead:
    def __init__(self, ctx: Context, commands: Commands) -> None:
        self.ctx = ctx
        self.commands = commands  # a ticked box runs the command it stands for
        self.dashboards = DashboardFlow(ctx.db, ctx.fixes.enqueue if ctx.fixes is not None else None)

    def refresh_dashboard(self, full_name: str, installation_id: int | None = None, *, force: bool = False,
                          now: datetime | None = None) -> str:
        installation_id = self.ctx.installation(full_name, installation_id)
        tracker = self.ctx.trackers(full_name, installation_id)
        # One writer per repository: two workers re-drawing at once could each tell a new notice.
        with repo_lock(self.ctx.db, full_name), self.ctx.source.open(full_name, installation_id) as repo:
            return self.dashboards.refresh(repo, tracker, full_name, now or datetime.now(timezone.utc), force=force)

    def refresh_dashboards(self, now: datetime | None = None) -> dict[str, str]:
        """Every known repository's dashboard (the reconcile schedule); one's failure never stops the others."""
        outcome: dict[str, str] = {}
        for full_name in self.ctx.repositories():
            try:
                outcome[full_name] = self.refresh_dashboard(full_name, now=now)
            except Exception as exc:
                log.warning("dashboard of %s failed: %s", full_name, exc)
                outcome[full_name] = f"failed: {exc}"
        return outcome

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
            flow = self.commands.flow()
            for action in ticked:
                if level not in WRITE_LEVELS:
                    lines.append(f"🚫 **{VERBS[action.verb]}** `{action.slug}`: only people with write access act "
                                 f"from this dashboard; @{actor} has {level}. I unticked the box; ask a maintainer.")
                else:
                    lines.append(f"**{VERBS[action.verb]}** `{action.slug}` (ticked by @{actor}): "
                                 f"{flow.act_on_box(where, action.verb, action.slug)}")
            tracker.upsert_comment(number, ANSWER_MARKER, "\n".join([ANSWER_MARKER, *lines]) + "\n", None)
        self.refresh_dashboard(full_name, installation_id, force=True)
        return lines

    def send_notice(self, payload: dict, delivery_id: str) -> int:
        """A queued `perfbot.notify` delivery: the notice POSTed, signed; a failure is retried by the queue."""
        url, notice = payload.get("url"), payload.get("notice")
        if not isinstance(url, str) or not isinstance(notice, dict):
            raise ValueError(f"perfbot.notify delivery {delivery_id} has no url or notice")
        return outgoing_webhook.send(url, notice, delivery_id, outgoing_webhook.notify_secret())
