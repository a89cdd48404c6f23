"""push: a push to the default branch syncs the reports it changed and brings their GitHub issues in step.

Pushes may be handled in any order; the sync moves the store to the newest of its head and the pushed commit
(by git ancestry and the branch as fetched), so a late delivery of an older push changes nothing."""
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
