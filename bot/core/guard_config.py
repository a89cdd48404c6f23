"""`[guards]` of `.perfbot.toml`: when fixed reports are measured again, and whether a regression is bisected.

A record closed as fixed keeps its reproduction as a guard. Guards are on by default (a fix is only worth
keeping fixed): measured again after each push to the default branch once pushes pause for
`debounce_minutes`, and/or at `schedule` ("daily 03:00", "mon 09:00") in `timezone`.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from bot.core.config_checks import ConfigFileError, check as _check, table_values
from bot.core.milestone_config import _check_value

GUARD_KEYS = {"after_push": "flag", "debounce_minutes": "minutes", "schedule": "schedule", "timezone": "timezone",
              "runner": "name", "bisect": "flag", "max_bisect_commits": "count"}
_DAILY = re.compile(r"daily\s+([01]?\d|2[0-3]):([0-5]\d)", re.IGNORECASE)


@dataclass(frozen=True)
class GuardSettings:
    after_push: bool = True
    debounce_minutes: int = 15  # a burst of pushes is measured once, at the head it settles on
    schedule: str | None = None  # "daily HH:MM" or "mon HH:MM"; None: only after pushes
    timezone: str = "UTC"
    runner: str | None = None  # None: the runner [[runners]] picks for the report's backend
    bisect: bool = True  # a regressed guard is bisected at once
    max_bisect_commits: int = 500  # a longer first-parent range is refused: name a narrower good..bad

    @property
    def enabled(self) -> bool:
        return self.after_push or self.schedule is not None


def parse_guards(table, lines: list[str]) -> GuardSettings:
    return GuardSettings(**(table_values("guards", table, lines, GUARD_KEYS, _value) or {}))


def _value(key: str, value, kind: str, line: int):
    if kind == "minutes":
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 24 * 60:
            raise ConfigFileError(key, line, f"{value!r} must be a whole number of minutes from 0 to 1440")
        return value
    if kind == "schedule" and isinstance(value, str) and _DAILY.fullmatch(value.strip()):
        found = _DAILY.fullmatch(value.strip())
        return f"daily {int(found.group(1)):02d}:{found.group(2)}"
    if kind == "schedule":
        try:
            return _check_value(key, value, kind, line)
        except ConfigFileError:
            raise ConfigFileError(key, line, f"{str(value)[:40]!r} must be \"daily HH:MM\" or a weekday and a "
                                  "24-hour time, e.g. \"daily 03:00\" or \"mon 09:00\"") from None
    if kind == "timezone":
        return _check_value(key, value, kind, line)
    return _check(key, value, kind, line)
