"""workflow_run and perfbot.actions-poll: a bench run's workflow on GitHub Actions completed (or is looked for)."""
from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from bot.core.events import WorkflowRun
from bot.errors import Invalid
from handlers.payload import Delivery, Tick, WorkflowRunEvent

if TYPE_CHECKING:
    from bot.services.usecases import BotServices

WANTS = {"workflow_run": frozenset({"completed"}), "perfbot.actions-poll": None}
# The bench workflow's run-name (deploy/github/perfbot-bench.yml): every other workflow run is not perfbot's.
TITLE = re.compile(r"perfbot bench run ([1-9][0-9]{0,11})")


def handle(delivery: Delivery[WorkflowRunEvent | Tick], services: BotServices) -> None:
    match delivery.payload:
        case Tick():
            services.fixes.poll_actions(datetime.now(UTC), delivery.delivery_id)
        case WorkflowRunEvent() as event if (ours := TITLE.fullmatch(event.workflow_run.display_title or "")):
            services.fixes.workflow_run_completed(event.full_name, event.installation_id, int(ours[1]),
                                                  workflow_run(event), delivery.delivery_id)


def workflow_run(event: WorkflowRunEvent) -> WorkflowRun:
    """Perfbot's own bench runs carry every field GitHub requires of a completed run; anything less is refused."""
    run = event.workflow_run
    missing = [key for key in ("path", "event", "status", "html_url", "created_at") if getattr(run, key) is None]
    if missing or run.created_at is None:
        raise Invalid(f"has no {', '.join(missing)}", at=f"workflow_run {run.id}")
    return WorkflowRun(run.id, run.display_title or "", run.path or "", run.event or "", run.status or "",
                       run.conclusion, run.actor.login if run.actor else "", run.created_at, run.html_url or "")
