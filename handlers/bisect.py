"""perfbot.bisect: a queued bisection, each step measured on the bench runner and shown on the record's issue."""
from __future__ import annotations

from bot.errors import UserError

EVENTS = frozenset({"perfbot.bisect"})


def handle(event, services) -> None:
    bisect_id = event.payload.get("bisection")
    if not isinstance(bisect_id, int) or isinstance(bisect_id, bool) or not event.repo:
        raise UserError(f"perfbot.bisect delivery {event.delivery_id} names no bisection")
    services.guards.run_bisection(bisect_id, event.repo, event.installation_id, event.keep_alive)
