"""perfbot.review: reports a push's LLM budget left unreviewed (instance file `[llm]`), reviewed by a worker when
the budget allows; queued like a delivery, so it waits, retries and survives a restart as deliveries do."""
from __future__ import annotations

from bot.errors import UserError
from handlers.payload import repo_full_name

EVENTS = frozenset({"perfbot.review"})


def handle(event, services) -> None:
    slugs = event.payload.get("slugs")
    if not isinstance(slugs, list) or not all(isinstance(s, str) for s in slugs) or not event.repo:
        raise UserError(f"perfbot.review delivery {event.delivery_id} names no reports")
    full_name = repo_full_name({"repository": {"full_name": event.repo}})
    services.reports.review_waiting(full_name, event.installation_id, set(slugs))
