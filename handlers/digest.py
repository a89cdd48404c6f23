"""perfbot.digest: the scheduler's check for weekly digests that are due, queued like a delivery so one worker
runs each check however many processes are up."""
from __future__ import annotations

from datetime import UTC, datetime

EVENTS = frozenset({"perfbot.digest"})


def handle(event, services) -> None:
    services.lead.post_due_digests(datetime.now(UTC))
