"""The weekly digest: posted when due (the quarter-hour tick), now (`perfbot digest`), or previewed."""
from __future__ import annotations

import logging
from datetime import datetime

from bot.services.lead.digest_flow import DigestFlow
from bot.services.lead.parity_flow import ParityFlow
from bot.services.usecases.context import Context

log = logging.getLogger("perfbot.services")


class Digests:
    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx

    def post_due(self, now: datetime) -> dict[str, str]:
        """Every repository whose `[digest]` schedule has passed without this week's digest gets it now."""
        outcome: dict[str, str] = {}
        for full_name in self.ctx.repositories():
            try:
                posted = self.post(full_name, None, now, only_if_due=True)
                outcome[full_name] = f"posted {posted['week']}" if posted else "nothing due"
            except Exception as exc:  # one repository's broken config or outage must not stop the others'
                log.warning("digest of %s failed: %s", full_name, exc)
                outcome[full_name] = f"failed: {exc}"
        return outcome

    def post(self, full_name: str, installation_id: int | None, now: datetime, *, only_if_due: bool = False,
             since: datetime | None = None) -> dict | None:
        """The weekly digest as an issue: when due, or now."""
        installation_id = self.ctx.installation(full_name, installation_id)
        tracker = self.ctx.trackers(full_name, installation_id)
        digests = DigestFlow(self.ctx.db)
        with self.ctx.source.open(full_name, installation_id) as repo:
            if only_if_due:
                return digests.post_if_due(repo, tracker, full_name, now)
            return digests.post(tracker, full_name, digests.config(repo), now, since,
                                parity=lambda: ParityFlow().default_branch(repo, full_name))

    def preview(self, full_name: str, installation_id: int | None, now: datetime,
                since: datetime | None = None) -> str:
        with self.ctx.source.open(full_name, installation_id) as repo:
            return DigestFlow(self.ctx.db).preview(repo, full_name, now, since)
