"""When a scheduled job (the weekly digest, a scheduled guard check) is due, from its schedule ("mon 09:00",
"daily 03:00") and time zone, with APScheduler's cron arithmetic (so daylight saving time is handled as
APScheduler does)."""
from __future__ import annotations

from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

from apscheduler.triggers.cron import CronTrigger


def trigger(schedule: str, timezone: str) -> CronTrigger:
    """`schedule` is already validated by repo_config: a weekday (or `daily`, for guards) and HH:MM."""
    day, clock = schedule.split()
    hour, minute = (int(part) for part in clock.split(":"))
    days = "*" if day == "daily" else day[:3].lower()
    return CronTrigger(day_of_week=days, hour=hour, minute=minute, timezone=ZoneInfo(timezone))


def last_due(schedule: str, timezone: str, now: datetime) -> datetime | None:
    """The latest scheduled time at or before `now`: the digest that should exist by now (None: a schedule
    that never fires)."""
    cron = trigger(schedule, timezone)
    moment = cron.get_next_fire_time(None, now - timedelta(days=8))
    due = moment
    while moment is not None and moment <= now:
        due, moment = moment, cron.get_next_fire_time(moment, moment + timedelta(seconds=1))
    return due

