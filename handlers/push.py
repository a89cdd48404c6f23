"""push: a push to the default branch syncs the reports it changed and brings their GitHub issues in step."""
from __future__ import annotations

from typing import TYPE_CHECKING

from handlers.payload import Delivery, Push

if TYPE_CHECKING:
    from bot.services.usecases import BotServices

WANTS = {"push": None}


def handle(delivery: Delivery[Push], services: BotServices) -> None:
    push = delivery.payload
    if push.to_default_branch:  # other branches are fix branches and drafts
        services.reports.sync_and_mirror(push.full_name, push.after, push.installation_id)
