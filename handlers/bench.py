"""perfbot.verify: a queued bench run, measured on its runner with its comment and status kept current."""
from __future__ import annotations

from typing import TYPE_CHECKING

from handlers.payload import BenchRunDue, Delivery

if TYPE_CHECKING:
    from bot.services.usecases import BotServices

WANTS = {"perfbot.verify": None}


def handle(delivery: Delivery[BenchRunDue], services: BotServices) -> None:
    services.fixes.run_bench(delivery.payload.run, delivery.named_repo, delivery.installation_id, delivery.keep_alive,
                             delivery.delivery_id)
