"""guards: fixed reports measured again once pushes to the default branch pause, or at `[guards] schedule`."""
from __future__ import annotations

from datetime import UTC, datetime

from bot.errors import UserError
from handlers.payload import commit_sha, installation_id, repo_full_name

# perfbot.digest is the scheduler's quarter-hour tick: scheduled guard checks ride on it.
EVENTS = frozenset({"push", "perfbot.guards", "perfbot.digest"})


def handle(event, services) -> None:
    if event.name == "perfbot.digest":
        services.guards.schedule(datetime.now(UTC))
        return
    if event.name == "perfbot.guards":
        if not event.repo:
            raise UserError(f"perfbot.guards delivery {event.delivery_id} names no repository")
        head = event.payload.get("head")
        services.guards.check(event.repo, commit_sha(head) if head is not None else None, event.installation_id)
        return
    payload = event.payload
    repository = payload.get("repository") or {}
    default = repository.get("default_branch") or repository.get("master_branch")
    if not default or payload.get("ref") != f"refs/heads/{default}" or payload.get("deleted"):
        return  # only the default branch is what fixed reports must stay fixed on
    services.guards.after_push(repo_full_name(payload), commit_sha(payload.get("after")), installation_id(payload))
