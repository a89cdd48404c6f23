"""perfbot.digest: the scheduler's check for weekly digests that are due, queued like a delivery so one worker
runs each check however many processes are up."""
from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING

from handlers.payload import Delivery, Tick

if TYPE_CHECKING:
    from bot.services.usecases import BotServices

WANTS = {"perfbot.digest": None}


def handle(delivery: Delivery[Tick], services: BotServices) -> None:
    services.lead.post_due_digests(datetime.now(UTC))
