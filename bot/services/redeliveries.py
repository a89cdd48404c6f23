"""Failed webhook deliveries asked again of GitHub (App mode): GitHub never redelivers on its own, so a delivery
answered 503 while the store was down, or sent while perfbot was unreachable, would be lost.

As GitHub's guide "Handling failed webhook deliveries" describes: on a schedule, list the App webhook's delivery
attempts of the last while (GET /app/hook/deliveries), and for every event (guid) none of whose attempts
succeeded, ask for its newest failed attempt again (POST /app/hook/deliveries/{id}/attempts). An event perfbot
stored after all (a redelivery that already arrived) is not asked for again.
"""
from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

log = logging.getLogger("perfbot.redeliveries")
EVENT = "perfbot.redeliveries"
INTERVAL_MINUTES = 5
# Attempts older than this are left alone: a check runs every few minutes, and an event failing for an hour is
# an outage for a person to look at (GitHub keeps deliveries three days; they can still be redelivered by hand).
LOOKBACK = timedelta(hours=1)


def succeeded(attempt: dict) -> bool:
    return attempt.get("status") == "OK" or 200 <= int(attempt.get("status_code") or 0) < 400


def to_redeliver(attempts: list[dict], stored: Callable[[str], bool]) -> list[dict]:
    """Per event (guid) with no successful attempt and not in perfbot's store: its newest attempt."""
    by_guid: dict[str, list[dict]] = {}
    for attempt in attempts:
        by_guid.setdefault(attempt["guid"], []).append(attempt)
    chosen = []
    for guid, tries in by_guid.items():
        if any(succeeded(t) for t in tries) or stored(guid):
            continue
        chosen.append(max(tries, key=lambda t: (t["delivered_at"], t["id"])))
    return sorted(chosen, key=lambda t: (t["delivered_at"], t["id"]))


def redeliver_failed(clients, stored: Callable[[str], bool], now: datetime | None = None) -> list[str]:
    """Ask GitHub to redeliver every recently failed event; returns their guids."""
    since = (now or datetime.now(UTC)) - LOOKBACK
    chosen = to_redeliver(clients.app_hook_deliveries(since), stored)
    for attempt in chosen:
        clients.redeliver_app_hook(attempt["id"])
        log.info("asked GitHub to redeliver %s (%s): its last attempt said %r", attempt["guid"], attempt["event"],
                 attempt.get("status"), extra={"delivery": attempt["guid"]})
    return [a["guid"] for a in chosen]
