"""`[[milestones]]` and `[digest]` of `.perfbot.toml`: what each declares, parsed strictly."""
from __future__ import annotations

import difflib
import re
import zoneinfo
from dataclasses import dataclass
from datetime import date

from bot.core.config_checks import ConfigFileError, check as _check, line_of as _line_of, suggest as _suggest

MILESTONE_KEYS = {"name": "title", "kind": ("seq-near-c", "par-speedup", "suite-passes"), "due": "date",
                  "threshold": "positive", "backend": ("c", "metal", "cuda"), "reports": "slugs",
                  "target": "positive", "runner": "name"}
DIGEST_KEYS = {"schedule": "schedule", "timezone": "timezone", "window_days": "count", "label": "label"}
SCHEMA = {"milestones": MILESTONE_KEYS, "digest": DIGEST_KEYS}


@dataclass(frozen=True)
class Milestone:
    """A goal the digest tracks; only the keys of its kind are set."""

    name: str
    kind: str  # seq-near-c | par-speedup | suite-passes
    due: date | None = None
    threshold: float | None = None  # seq-near-c; None: [verify] seq_threshold
    backend: str | None = None  # seq-near-c: only this backend's reports
    reports: tuple[str, ...] = ()  # par-speedup
    target: float | None = None  # par-speedup: the speedup each named report must reach
    runner: str | None = None  # suite-passes


@dataclass(frozen=True)
class DigestSchedule:
    schedule: str = "mon 09:00"  # normalized: three-letter weekday, HH:MM
    timezone: str = "UTC"
    window_days: int = 7
    label: str = "digest"
    declared: bool = False  # the file has a [digest] section


# Which milestone keys belong to which kind, and which of them a kind cannot do without.
KIND_KEYS = {"seq-near-c": ("threshold", "backend"), "par-speedup": ("reports", "target"), "suite-passes": ("runner",)}
REQUIRED = {"par-speedup": ("reports", "target"), "suite-passes": ("runner",)}
WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_SCHEDULE = re.compile(r"([A-Za-z]+)\s+([01]?\d|2[0-3]):([0-5]\d)")
_LABEL = re.compile(r"[A-Za-z0-9][A-Za-z0-9 _.:/-]{0,49}")
_SLUG = re.compile(r"perf_[a-z0-9_]+")


def parse_milestones(tables, lines: list[str], runner_names: set[str]) -> tuple[Milestone, ...]:
    if tables is None:
        return ()
    if not (isinstance(tables, list) and all(isinstance(t, dict) for t in tables)):
        raise ConfigFileError("milestones", _line_of(lines, "milestones"), "write each milestone as a [[milestones]] table")
    out: list[Milestone] = []
    for index, table in enumerate(tables):
        where = lambda key, index=index: _line_in(lines, "milestones", index, key)  # noqa: E731
        values = _values(table, "milestones", where)
        for required in ("name", "kind") + REQUIRED.get(values.get("kind"), ()):
            if required not in values:
                raise ConfigFileError(f"milestones.{required}", where(None),
                                      f"is required for {values.get('kind', 'every')} milestones")
        kind = values["kind"]
        for key in values:
            owner = next((k for k, keys in KIND_KEYS.items() if key in keys), kind)
            if owner != kind:
                raise ConfigFileError(f"milestones.{key}", where(key), f"is for {owner} milestones, not {kind}")
        if any(m.name == values["name"] for m in out):
            raise ConfigFileError("milestones.name", where("name"), f"two milestones are named {values['name']!r}")
        if "runner" in values and values["runner"] not in runner_names:
            raise ConfigFileError("milestones.runner", where("runner"), f"no [[runners]] is named "
                                  f"{values['runner']!r}{_suggest(values['runner'], runner_names)}")
        out.append(Milestone(**values))
    return tuple(out)


def parse_digest(table, lines: list[str]) -> DigestSchedule:
    if table is None:
        return DigestSchedule()
    if not isinstance(table, dict):
        raise ConfigFileError("digest", _line_of(lines, "digest"), "must be a table: write it as [digest]")
    return DigestSchedule(**_values(table, "digest", lambda key: _line_in(lines, "digest", 0, key)), declared=True)


def _values(table: dict, section: str, where) -> dict:
    out = {}
    for key, value in table.items():
        kind = SCHEMA[section].get(key)
        if kind is None:
            raise ConfigFileError(f"{section}.{key}", where(key), f"unknown key{_suggest(key, SCHEMA[section])}")
        out[key] = _check_value(f"{section}.{key}", value, kind, where(key))
    return out


def _check_value(key: str, value, kind, line: int):
    fail = lambda problem: ConfigFileError(key, line, problem)  # noqa: E731
    if kind == "title":
        if not isinstance(value, str) or not value.strip() or len(value) > 80 or not value.isprintable():
            raise fail("must be a one-line name of at most 80 characters")
        return value.strip()
    if kind == "date":
        if type(value) is not date:  # a TOML datetime is a date too, but a milestone is due on a day
            raise fail(f"{str(value)[:40]!r} must be a TOML date such as 2026-12-31 (no quotes, no time)")
        return value
    if kind == "slugs":
        if not isinstance(value, list) or not value or not all(isinstance(v, str) and _SLUG.fullmatch(v) for v in value):
            raise fail('must list report slugs, e.g. ["perf_fib_par"]')
        if len(set(value)) != len(value):
            raise fail("names a report twice")
        return tuple(value)
    if kind == "schedule":
        found = _SCHEDULE.fullmatch(value.strip()) if isinstance(value, str) else None
        word = found.group(1).lower() if found else ""
        day = next((d for d in WEEKDAYS if word in (d, d[:3])), None)
        if day is None:
            raise fail(f"{str(value)[:40]!r} must be a weekday and a 24-hour time, e.g. \"mon 09:00\"")
        return f"{day[:3]} {int(found.group(2)):02d}:{found.group(3)}"
    if kind == "timezone":
        known = zoneinfo.available_timezones()  # a name, never a path: ZoneInfo would read any file it names
        if not isinstance(value, str) or value not in known:
            close = difflib.get_close_matches(str(value), list(known), n=1)
            raise fail(f"{str(value)[:60]!r} is not an IANA time zone"
                       + (f"; did you mean {close[0]!r}?" if close else ', e.g. "Europe/Berlin" or "UTC"'))
        return value
    if kind == "label":
        if not isinstance(value, str) or not _LABEL.fullmatch(value):
            raise fail(f"{str(value)[:60]!r} must be a label of letters, digits and ' _.:/-' (at most 50)")
        return value
    return _check(key, value, kind, line)


def _line_in(lines: list[str], section: str, index: int, key: str | None) -> int:
    """The line of `key` in the index-th [section] or [[section]] table, else that table's own line."""
    header = re.compile(rf"^\s*\[\[?\s*{re.escape(section)}\s*\]\]?\s*(#.*)?$")
    starts = [n for n, line in enumerate(lines, 1) if header.match(line)]
    if index >= len(starts):
        return _line_of(lines, key or section)  # written inline or dotted: its first mention will do
    assignment = re.compile(rf"^\s*{re.escape(key)}\s*=") if key else None
    for n in range(starts[index] + 1, len(lines) + 1):
        if lines[n - 1].lstrip().startswith("["):
            break
        if assignment and assignment.match(lines[n - 1]):
            return n
    return starts[index]
