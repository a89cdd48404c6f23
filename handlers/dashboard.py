"""The campaign dashboard issue: re-drawn after syncs, pull requests, bench runs and the reconcile; a person's
edit of it (ticking an action box) carried out; `perfbot.notify` sends a notice to the outgoing webhook.

Listed after the handlers it follows in HANDLERS, so on the same delivery it sees what they changed.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from bot.core.commands import find_commands
from bot.core.lead.dashboard import MARKER
from handlers.payload import (
    BenchRunDue,
    CommentEvent,
    Delivery,
    IssuesEvent,
    NoticeDue,
    PullRequestEvent,
    Push,
    Tick,
    WorkflowRunEvent,
)

if TYPE_CHECKING:
    from bot.services.usecases import BotServices

COMMENTED = frozenset({"created", "edited"})
WANTS = {"push": None, "pull_request": frozenset({"opened", "reopened", "synchronize", "edited", "closed",
                                                   "ready_for_review"}),
         "perfbot.verify": None, "workflow_run": frozenset({"completed"}), "issue_comment": COMMENTED,
         "pull_request_review_comment": COMMENTED, "issues": frozenset({"edited", "closed"}),
         "perfbot.reconcile": None, "perfbot.notify": None}

Redrawn = Push | PullRequestEvent | WorkflowRunEvent | CommentEvent


def handle(delivery: Delivery[NoticeDue | Tick | IssuesEvent | BenchRunDue | Redrawn], services: BotServices) -> None:
    match delivery.payload:
        case NoticeDue(url=url, notice=notice):
            services.lead.send_notice(url, notice, delivery.delivery_id)
        case Tick():
            services.lead.refresh_dashboards()
        case IssuesEvent() as event:
            _edited(delivery.action, event, delivery.delivery_id, services)
        case BenchRunDue():
            services.lead.refresh_dashboard(delivery.named_repo, delivery.installation_id)
        case Push() | PullRequestEvent() | WorkflowRunEvent() | CommentEvent() as event:
            if _changes_something(event, services):
                # A comment's answer is posted by now; its re-draw waits in the queue rather than hold the
                # comment lane while a long job holds the repository (every later comment would wait behind it).
                services.lead.refresh_dashboard(event.full_name, event.installation_id,
                                                wait=not isinstance(event, CommentEvent))


def _changes_something(event: Redrawn, services: BotServices) -> bool:
    """Only the deliveries after which the dashboard can read differently: no clone fetched for the others."""
    match event:
        case Push():
            return event.to_default_branch
        case CommentEvent():  # only a comment holding /perf commands (a queued run, a close) counts
            body = event.comment.body or ""
            return not body.startswith("<!-- perfbot:") and \
                bool(find_commands(body, services.context.bot_login.removesuffix("[bot]")))
    return True


def _edited(action: str | None, event: IssuesEvent, delivery_id: str, services: BotServices) -> None:
    """An edit may tick boxes; a close is undone (as Renovate reopens its dashboard) by the forced re-draw."""
    body = event.issue.body
    if body is None or not body.startswith(MARKER) or services.context.is_bot(event.sender_login):
        return  # not the dashboard, or our own re-draw echoing back
    # A title edit or a close carries no old body: then nothing counts as newly ticked.
    old_body = (event.changes.old_body if event.changes else None) or body
    services.commands.dashboard_edited(event.full_name, event.issue.number, old_body, body, event.sender_login,
                                       event.installation_id, delivery_id)
