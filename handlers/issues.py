"""issues: people closing, reopening or editing a mirrored issue (a close without a verdict is an override),
or labelling it `not a duplicate` to overrule dedup."""
from __future__ import annotations

from typing import TYPE_CHECKING

from handlers.payload import Delivery, IssuesEvent

if TYPE_CHECKING:
    from bot.services.usecases import BotServices

WANTS = {"issues": frozenset({"closed", "reopened", "edited", "labeled"})}
NOT_A_DUPLICATE = "not a duplicate"


def handle(delivery: Delivery[IssuesEvent], services: BotServices) -> None:
    event = delivery.payload
    actor = event.sender_login
    if services.context.is_bot(actor):
        return  # our own writes come back as events; they change nothing
    if delivery.action == "labeled":
        if event.label is not None and event.label.name.lower() == NOT_A_DUPLICATE:
            services.reports.overrule_dedup(event.full_name, event.issue.number, actor)
        return
    services.reports.issue_changed_by_person(event.full_name, event.issue.number, delivery.action or "", actor,
                                             delivery.delivery_id)
