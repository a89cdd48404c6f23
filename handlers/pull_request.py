"""pull_request: a PR that names reports it fixes is attached to them, verified on its head, and closes them
when it merges with a passing verdict on that head; every new head gets the parity guard's check run."""
from __future__ import annotations

from bot.core.events import PullInfo
from bot.core.tracker.refnames import branch_name_problem
from bot.errors import UserError
from handlers.payload import commit_sha, installation_id, login, repo_full_name

EVENTS = frozenset({"pull_request"})
WATCHED = frozenset({"opened", "reopened", "synchronize", "edited", "ready_for_review", "closed"})
PARITY_ACTIONS = frozenset({"opened", "reopened", "synchronize"})  # a new head (or a PR seen anew) is checked


def handle(event, services) -> None:
    if event.action not in WATCHED:
        return
    payload = event.payload
    full_name = repo_full_name(payload)
    pull = pull_info(payload, full_name)
    if event.action == "closed" and not pull.merged:
        services.fixes.pull_closed_unmerged(full_name, pull.number)
        return
    services.fixes.pull_request_changed(full_name, pull, installation_id(payload), event.delivery_id)
    if event.action in PARITY_ACTIONS:
        services.fixes.pull_request_parity(full_name, pull, installation_id(payload))


def pull_info(payload: dict, full_name: str) -> PullInfo:
    pr = payload.get("pull_request") or {}
    head, base = pr.get("head") or {}, pr.get("base") or {}
    number = pr.get("number")
    if not isinstance(number, int) or number < 1:
        raise UserError(f"pull_request payload without a valid number (got {str(number)[:40]!r})")
    refs: list[str] = []
    for side, ref in (("head", head.get("ref")), ("base", base.get("ref"))):
        problem = branch_name_problem(ref) if isinstance(ref, str) else "it is missing"
        if problem or not isinstance(ref, str):
            raise UserError(f"PR #{number}: the {side} branch {str(ref)[:80]!r} is refused: {problem}")
        refs.append(ref)
    head_repo = (head.get("repo") or {}).get("full_name")
    body = pr.get("body")
    return PullInfo(number=number, head_ref=refs[0], head_sha=commit_sha(head.get("sha")), base_ref=refs[1],
                    base_sha=commit_sha(base.get("sha")), body=body if isinstance(body, str) else "",
                    author=login(pr, "user"), same_repo=head_repo == full_name, draft=pr.get("draft") is True,
                    merged=pr.get("merged") is True)
