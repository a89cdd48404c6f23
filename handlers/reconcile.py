"""perfbot.reconcile: the hourly re-sync from git, queued like a delivery so exactly one worker runs it."""
from __future__ import annotations

from typing import TYPE_CHECKING

from handlers.payload import Delivery, Tick

if TYPE_CHECKING:
    from bot.services.usecases import BotServices

WANTS = {"perfbot.reconcile": None}


def handle(delivery: Delivery[Tick], services: BotServices) -> None:
    services.reports.reconcile()
