"""workflow_run and perfbot.actions-poll: a bench run's workflow on GitHub Actions completed (or is looked for)."""
from __future__ import annotations

import re
from datetime import UTC, datetime

from bot.errors import UserError
from handlers.payload import installation_id, login, repo_full_name

EVENTS = frozenset({"workflow_run", "perfbot.actions-poll"})
# The bench workflow's run-name (deploy/github/perfbot-bench.yml): every other workflow run is not perfbot's.
TITLE = re.compile(r"perfbot bench run ([1-9][0-9]{0,11})")


def handle(event, services) -> None:
    if event.name == "perfbot.actions-poll":
        services.fixes.poll_actions(datetime.now(UTC), event.delivery_id)
        return
    payload = event.payload
    run = payload.get("workflow_run") or {}
    title = run.get("display_title")
    ours = TITLE.fullmatch(title) if isinstance(title, str) else None
    if payload.get("action") != "completed" or ours is None:
        return
    services.fixes.workflow_run_completed(repo_full_name(payload), installation_id(payload),
                                          int(ours[1]), workflow_run(run), event.delivery_id)


def workflow_run(run: dict) -> dict:
    """The fields perfbot uses, each checked: the payload is signed, but its values are still only data."""
    fields = {"id": run.get("id"), "title": run.get("display_title"), "path": run.get("path"),
              "event": run.get("event"), "status": run.get("status"), "conclusion": run.get("conclusion"),
              "actor": login(run, "actor"), "html_url": run.get("html_url") or ""}
    if not isinstance(fields["id"], int) or isinstance(fields["id"], bool):
        raise UserError(f"workflow_run.id is not a number: {str(fields['id'])[:40]!r}")
    for key in ("path", "event", "status", "html_url"):
        if not isinstance(fields[key], str):
            raise UserError(f"workflow_run.{key} is not text")
    if fields["conclusion"] is not None and not isinstance(fields["conclusion"], str):
        raise UserError("workflow_run.conclusion is not text")
    try:
        fields["created_at"] = datetime.fromisoformat(str(run.get("created_at")).replace("Z", "+00:00"))
    except ValueError:
        raise UserError(f"workflow_run.created_at is not a time: {str(run.get('created_at'))[:40]!r}") from None
    return fields
