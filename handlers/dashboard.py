"""The campaign dashboard issue: re-drawn after syncs, pull requests, bench runs and the reconcile; a person's
edit of it (ticking an action box) carried out; `perfbot.notify` sends a notice to the outgoing webhook.

Listed after the handlers it follows in HANDLERS, so on the same delivery it sees what they changed.
"""
from __future__ import annotations

from bot.core.commands import find_commands
from bot.core.lead.dashboard import MARKER
from bot.errors import UserError
from handlers.payload import installation_id, login, repo_full_name

REDRAWN_AFTER = frozenset({"push", "pull_request", "perfbot.verify", "workflow_run", "issue_comment",
                           "pull_request_review_comment"})
EVENTS = REDRAWN_AFTER | {"issues", "perfbot.reconcile", "perfbot.notify"}
PULL_ACTIONS = frozenset({"opened", "reopened", "synchronize", "edited", "closed", "ready_for_review"})


def handle(event, services) -> None:
    if event.name == "perfbot.notify":
        services.lead.send_notice(event.payload, event.delivery_id)
    elif event.name == "perfbot.reconcile":
        services.lead.refresh_dashboards()
    elif event.name == "issues":
        _edited(event, services)
    elif event.name == "perfbot.verify":
        if not event.repo:
            raise UserError(f"perfbot.verify delivery {event.delivery_id} names no repository")
        services.lead.refresh_dashboard(event.repo, event.installation_id)
    elif _changes_something(event, services):
        try:
            full_name = repo_full_name(event.payload)
        except UserError:
            return  # the event's own handler reports the bad payload; one error for one delivery
        services.lead.refresh_dashboard(full_name, installation_id(event.payload))


def _changes_something(event, services) -> bool:
    """Only the deliveries after which the dashboard can read differently: no clone fetched for the others."""
    payload = event.payload
    if event.name == "push":
        repository = payload.get("repository") or {}
        default = repository.get("default_branch") or repository.get("master_branch")
        return bool(default) and payload.get("ref") == f"refs/heads/{default}" and not payload.get("deleted")
    if event.name == "workflow_run":
        return event.action == "completed"
    if event.name.endswith("comment"):  # only a comment holding /perf commands (a queued run, a close) counts
        comment = payload.get("comment") or {}
        body = comment.get("body")
        body = body if isinstance(body, str) else ""
        return event.action in ("created", "edited") and not body.startswith("<!-- perfbot:") and \
            bool(find_commands(body, services.context.bot_login.removesuffix("[bot]")))
    return event.action in PULL_ACTIONS


def _edited(event, services) -> None:
    """An edit may tick boxes; a close is undone (as Renovate reopens its dashboard) by the forced re-draw."""
    if event.action not in ("edited", "closed"):
        return
    issue = event.payload.get("issue") or {}
    body, number = issue.get("body"), issue.get("number")
    actor = login(event.payload)
    if not isinstance(body, str) or not isinstance(number, int) or not body.startswith(MARKER):
        return
    if services.context.is_bot(actor):
        return  # our own re-draw echoes back
    before = ((event.payload.get("changes") or {}).get("body") or {}).get("from")
    # A title edit or a close carries no old body: then nothing counts as newly ticked.
    old_body = before if isinstance(before, str) else body
    services.commands.dashboard_edited(repo_full_name(event.payload), number, old_body, body, actor,
                                       installation_id(event.payload), event.delivery_id)
