"""`[notify]` of `.perfbot.toml`: who hears of milestones and blockers at once, and where a chat tool listens."""
from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import urlsplit

from bot.core.config_checks import ConfigFileError, check as _check, table_values

NOTIFY_KEYS = {"people": "logins", "webhook_url": "url", "stuck_days": "count", "host_hours": "count"}
# A GitHub login, or a team as org/team; the @ is optional in the file and added when mentioning.
_LOGIN = re.compile(r"@?([A-Za-z0-9](?:[A-Za-z0-9-]{0,38})(?:/[A-Za-z0-9][A-Za-z0-9_.-]{0,99})?)")


@dataclass(frozen=True)
class NotifySettings:
    """Where notices go. The webhook's secret is never here: it comes from PERFBOT_NOTIFY_SECRET."""

    people: tuple[str, ...] = ()  # logins (or org/team) without the @
    webhook_url: str | None = None
    stuck_days: int = 7  # an open report without a root cause this long is a blocker
    host_hours: int = 1  # a bench run waiting for its host this long means the host is unreachable
    declared: bool = False

    @property
    def mentions(self) -> str:
        return " ".join(f"@{p}" for p in self.people)


def parse_notify(table, lines: list[str]) -> NotifySettings:
    values = table_values("notify", table, lines, NOTIFY_KEYS, _value)
    return NotifySettings() if values is None else NotifySettings(**values, declared=True)


def _value(key: str, value, kind: str, line: int):
    if kind == "logins":
        found = [_LOGIN.fullmatch(v) if isinstance(v, str) else None for v in value] if isinstance(value, list) else [None]
        if not found or not all(found):
            raise ConfigFileError(key, line, 'must list GitHub logins or org/team names, e.g. ["lead", "org/perf"]')
        people = tuple(m.group(1) for m in found)
        if len({p.lower() for p in people}) != len(people):
            raise ConfigFileError(key, line, "names someone twice")
        return people
    if kind == "url":
        parts = urlsplit(value) if isinstance(value, str) and len(value) <= 500 and value.isprintable() else None
        if parts is None or parts.scheme not in ("http", "https") or not parts.hostname or " " in value:
            raise ConfigFileError(key, line, f"{str(value)[:60]!r} must be an http(s) URL, e.g. "
                                  '"https://chat.example/hooks/perf"')
        if parts.username or parts.password:
            raise ConfigFileError(key, line, "must not hold credentials: the file is public to the repository; "
                                  "set PERFBOT_NOTIFY_SECRET in perfbot's environment instead")
        return value
    return _check(key, value, kind, line)
