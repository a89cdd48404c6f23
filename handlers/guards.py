"""guards: fixed reports measured again once pushes to the default branch pause, or at `[guards] schedule`."""
from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING

from handlers.payload import Delivery, GuardCheckDue, Push, Tick

if TYPE_CHECKING:
    from bot.services.usecases import BotServices

# perfbot.digest is the scheduler's quarter-hour tick: scheduled guard checks ride on it.
WANTS = {"push": None, "perfbot.guards": None, "perfbot.digest": None}


def handle(delivery: Delivery[Push | GuardCheckDue | Tick], services: BotServices) -> None:
    match delivery.payload:
        case Tick():
            services.guards.schedule(datetime.now(UTC))
        case GuardCheckDue(head=head):
            services.guards.check(delivery.named_repo, head, delivery.installation_id)
        case Push() as push if push.to_default_branch:  # what fixed reports must stay fixed on
            services.guards.after_push(push.full_name, push.after, push.installation_id)
