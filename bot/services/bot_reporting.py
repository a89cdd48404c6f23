"""BotServices' reporting: the weekly digest (due, posted, previewed), comment commands, and overrides by
command."""
from __future__ import annotations

import logging
from datetime import datetime

from bot.adapters.store import service_queries as queries
from bot.adapters.store.bench import fix_store
from bot.core.tracker import overrides
from bot.services.commands import CommandFlow, Where
from bot.services.lead.digest_flow import DigestFlow
from bot.services.lead.parity_flow import ParityFlow

log = logging.getLogger("perfbot.services")


class Reporting:
    """Mixed into BotServices: uses its db, trackers and source."""

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
            return digests.post(tracker, full_name, digests.config(repo), now, since,
                                parity=lambda: ParityFlow().default_branch(repo, full_name))

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
