"""The lead's view: the weekly digest (posted when due, now, or previewed), the campaign dashboard issue re-drawn
after changes, and notices sent on to the optional outgoing webhook."""
from __future__ import annotations

import logging
from datetime import UTC, datetime

from bot.adapters import outgoing_webhook
from bot.adapters.store.locks import repo_lock
from bot.core.config.instance import DEFAULT_OPERATOR, source_allowed
from bot.digest.flow import DigestFlow
from bot.errors import NotAllowed
from bot.parity.flow import ParityFlow
from bot.services.lead.dashboard_flow import DashboardFlow
from bot.services.usecases.context import Context

log = logging.getLogger("perfbot.services")


class Lead:
    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self.dashboards = DashboardFlow(ctx.db, ctx.fixes.enqueue if ctx.fixes is not None else None,
                                        ctx.bench.operator if ctx.bench is not None else DEFAULT_OPERATOR)

    def post_due_digests(self, now: datetime) -> dict[str, str]:
        """Every repository whose `[digest]` schedule has passed without this week's digest gets it now."""
        outcome: dict[str, str] = {}
        for full_name in self.ctx.repositories():
            try:
                posted = self.post_digest(full_name, None, now, only_if_due=True)
                outcome[full_name] = f"posted {posted['week']}" if posted else "nothing due"
            except Exception as exc:  # one repository's broken config or outage must not stop the others'
                log.warning("digest of %s failed: %s", full_name, exc)
                outcome[full_name] = f"failed: {exc}"
        return outcome

    def post_digest(self, full_name: str, installation_id: int | None, now: datetime, *, only_if_due: bool = False,
                    since: datetime | None = None) -> dict | None:
        """The weekly digest as an issue: when due (the quarter-hour tick), or now (`perfbot digest`)."""
        installation_id = self.ctx.installation(full_name, installation_id)
        tracker = self.ctx.trackers(full_name, installation_id)
        digests = DigestFlow(self.ctx.db)
        with self.ctx.source.open(full_name, installation_id) as repo:
            if only_if_due:
                return digests.post_if_due(repo, tracker, full_name, now)
            return digests.post(tracker, full_name, digests.config(repo), now, since,
                                parity=lambda: ParityFlow().default_branch(repo, full_name))

    def preview_digest(self, full_name: str, installation_id: int | None, now: datetime,
                       since: datetime | None = None) -> str:
        with self.ctx.source.open(full_name, installation_id) as repo:
            return DigestFlow(self.ctx.db).preview(repo, full_name, now, since)

    def refresh_dashboard(self, full_name: str, installation_id: int | None = None, *, force: bool = False,
                          now: datetime | None = None, wait: bool = True) -> str:
        """`wait=False`: RepositoryBusy rather than wait while a long job holds the repository (after a comment,
        whose thread must stay free for the next comment; the delivery waits in the queue instead)."""
        installation_id = self.ctx.installation(full_name, installation_id)
        tracker = self.ctx.trackers(full_name, installation_id)
        # One writer per repository: two workers re-drawing at once could each tell a new notice.
        with repo_lock(self.ctx.db, full_name, wait=wait), self.ctx.source.open(full_name, installation_id) as repo:
            return self.dashboards.refresh(repo, tracker, full_name, now or datetime.now(UTC), force=force)

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

    def send_notice(self, url: str, notice: dict, delivery_id: str) -> int:
        """A queued `perfbot.notify` delivery: the notice POSTed, signed; a failure is retried by the queue.
        The URL is the repository's, so it is POSTed to only under a prefix the operator allows."""
        operator = self.ctx.bench.operator if self.ctx.bench is not None else DEFAULT_OPERATOR
        if not source_allowed(url, operator.notify_sources):
            raise NotAllowed(f"[notify] webhook_url {url[:100]!r} is not an address the operator allows, so no "
                             "notice is sent there", "the operator adds its prefix to [notify] allow in the "
                             "instance file", rule="[notify] allow")
        return outgoing_webhook.send(url, notice, delivery_id, outgoing_webhook.notify_secret())
