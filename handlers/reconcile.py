"""perfbot.reconcile: the hourly re-sync from git, queued like a delivery so exactly one worker runs it."""
from __future__ import annotations

EVENTS = frozenset({"perfbot.reconcile"})


def handle(event, services) -> None:
    services.reports.reconcile()
