"""pull_request: a PR that names reports it fixes is attached to them, verified on its head, and closes them
when it merges with a passing verdict on that head; every new head gets the parity guard's check run."""
from __future__ import annotations

from typing import TYPE_CHECKING

from bot.core.events import PullInfo
from bot.core.tracker.refnames import branch_name_problem
from bot.errors import NotAllowed
from handlers.payload import Delivery, PullRequestEvent

if TYPE_CHECKING:
    from bot.services.usecases import BotServices

WANTS = {"pull_request": frozenset({"opened", "reopened", "synchronize", "edited", "ready_for_review", "closed"})}
PARITY_ACTIONS = frozenset({"opened", "reopened", "synchronize"})  # a new head (or a PR seen anew) is checked


def handle(delivery: Delivery[PullRequestEvent], services: BotServices) -> None:
    event = delivery.payload
    pull = pull_info(event)
    if delivery.action == "closed" and not pull.merged:
        services.fixes.pull_closed_unmerged(event.full_name, pull.number)
        return
    services.fixes.pull_request_changed(event.full_name, pull, event.installation_id, delivery.delivery_id)
    if delivery.action in PARITY_ACTIONS:
        services.fixes.pull_request_parity(event.full_name, pull, event.installation_id)


def pull_info(event: PullRequestEvent) -> PullInfo:
    """The pull request as perfbot acts on it; a branch name git or a shell could misread is refused."""
    pr = event.pull_request
    for side, branch in (("head", pr.head), ("base", pr.base)):
        if problem := branch_name_problem(branch.ref):
            raise NotAllowed(f"PR #{pr.number}: the {side} branch {branch.ref[:80]!r} is refused: {problem}",
                             "rename the branch",
                             rule="branch names")
    head_repo = pr.head.repo.full_name if pr.head.repo else None
    return PullInfo(number=pr.number, head_ref=pr.head.ref, head_sha=pr.head.sha, base_ref=pr.base.ref,
                    base_sha=pr.base.sha, body=pr.body or "", author=pr.user.login if pr.user else "",
                    same_repo=head_repo == event.full_name, draft=pr.draft, merged=pr.merged)
