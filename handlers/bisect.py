"""perfbot.bisect: a queued bisection, each step measured on the bench runner and shown on the record's issue."""
from __future__ import annotations

from typing import TYPE_CHECKING

from handlers.payload import BisectionDue, Delivery

if TYPE_CHECKING:
    from bot.services.usecases import BotServices

WANTS = {"perfbot.bisect": None}


def handle(delivery: Delivery[BisectionDue], services: BotServices) -> None:
    services.guards.run_bisection(delivery.payload.bisection, delivery.named_repo, delivery.installation_id,
                                  delivery.keep_alive)
