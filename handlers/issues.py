"""issues: notice people closing, reopening or editing a mirrored issue; a close without a verdict is an override."""
from __future__ import annotations

from handlers.payload import login, repo_full_name

EVENTS = frozenset({"issues"})
WATCHED = frozenset({"closed", "reopened", "edited"})


def handle(event, services) -> None:
    if event.action not in WATCHED:
        return
    actor = login(event.payload)
    if services.is_bot(actor):
        return  # our own writes come back as events; they change nothing
    number = (event.payload.get("issue") or {}).get("number")
    if not isinstance(number, int):
        return
    services.issue_changed_by_person(repo_full_name(event.payload), number, event.action, actor, event.delivery_id)
