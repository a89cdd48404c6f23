"""perfbot.verify: a queued bench run, measured on its runner with its comment and status kept current."""
from __future__ import annotations

from bot.errors import UserError

EVENTS = frozenset({"perfbot.verify"})


def handle(event, services) -> None:
    run_id = event.payload.get("run")
    if not isinstance(run_id, int) or not event.repo:
        raise UserError(f"perfbot.verify delivery {event.delivery_id} names no bench run")
    services.fixes.run_bench(run_id, event.repo, event.installation_id, event.keep_alive, event.delivery_id)
