"""issues: people closing, reopening or editing a mirrored issue (a close without a verdict is an override),
or labelling it `not a duplicate` to overrule dedup."""
from __future__ import annotations

from handlers.payload import login, repo_full_name

EVENTS = frozenset({"issues"})
WATCHED = frozenset({"closed", "reopened", "edited", "labeled"})
NOT_A_DUPLICATE = "not a duplicate"


def handle(event, services) -> None:
    if event.action not in WATCHED:
        return
    actor = login(event.payload)
    if services.context.is_bot(actor):
        return  # our own writes come back as events; they change nothing
    number = (event.payload.get("issue") or {}).get("number")
    if not isinstance(number, int):
        return
    if event.action == "labeled":
        label = (event.payload.get("label") or {}).get("name")
        if isinstance(label, str) and label.lower() == NOT_A_DUPLICATE:
            services.reports.overrule_dedup(repo_full_name(event.payload), number, actor)
        return
    services.reports.issue_changed_by_person(repo_full_name(event.payload), number, event.action, actor,
                                             event.delivery_id)
