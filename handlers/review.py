"""perfbot.review: reports a push's LLM budget left unreviewed (instance file `[llm]`), reviewed by a worker when
the budget allows; queued like a delivery, so it waits, retries and survives a restart as deliveries do."""
from __future__ import annotations

from typing import TYPE_CHECKING

from handlers.payload import Delivery, ReviewDue

if TYPE_CHECKING:
    from bot.services.usecases import BotServices

WANTS = {"perfbot.review": None}


def handle(delivery: Delivery[ReviewDue], services: BotServices) -> None:
    services.reports.review_waiting(delivery.named_repo, delivery.installation_id, set(delivery.payload.slugs))
