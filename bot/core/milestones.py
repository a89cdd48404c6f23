"""Milestones and the digest schedule from `.perfbot.toml`, parsed strictly; where reports stand; progress."""
from __future__ import annotations

import difflib
import re
import zoneinfo
from dataclasses import dataclass
from datetime import date, datetime
from typing import TYPE_CHECKING

from bot.core.repo_config import SCHEMA, ConfigFileError, DigestSchedule, Milestone, _check, _line_of, _suggest

if TYPE_CHECKING:
    from bot.core.digest import RecordFact

# Which milestone keys belong to which kind, and which of them a kind cannot do without.
KIND_KEYS = {"seq-near-c": ("threshold", "backend"), "par-speedup": ("reports", "target"), "suite-passes": ("runner",)}
REQUIRED = {"par-speedup": ("reports", "target"), "suite-passes": ("runner",)}
WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
LIVE = ("open", "fixed")  # a fixed report still counts: it is a report the milestone was about, now done
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


@dataclass(frozen=True)
class SidePoint:
    side: str  # base | head
    point: float | None  # seq: language/C; par: speedup
    low: float | None
    high: float | None


@dataclass(frozen=True)
class RunFact:
    id: int
    slug: str
    runner: str
    purpose: str  # fix | reproduce
    status: str
    verdict: str
    pr_number: int | None
    created_at: datetime
    finished_at: datetime | None
    sides: tuple[SidePoint, ...]
    suite_verdict: str | None  # None: the run did not run the suite

    def side(self, name: str) -> SidePoint | None:
        return next((s for s in self.sides if s.side == name and s.point is not None), None)

    @property
    def claim_failed(self) -> bool:
        """A reproduce run that passed found no gap: the report's claim did not hold."""
        return self.purpose == "reproduce" and self.verdict == "pass" and self.side("head") is not None


@dataclass(frozen=True)
class Standing:
    """Where a report stands at the digest's end: what milestones are measured against."""

    slug: str
    state: str
    track: str | None
    backend: str | None
    ratio: float | None  # the latest verified head ratio, else the measured, else the claimed one
    source: str  # verified | measured | claimed | none
    speedup: float | None  # par: the latest passing (else measured) run's speedup point


@dataclass(frozen=True)
class Failing:
    name: str  # a slug or a runner
    value: float | None
    why: str


@dataclass(frozen=True)
class MilestoneProgress:
    name: str
    kind: str
    due: date | None
    done: int
    total: int
    fraction: float | None  # None: nothing to count (no report matches)
    failing: tuple[Failing, ...]
    met: bool
    overdue: bool


def progress(milestone: Milestone, standings: dict[str, Standing], suites: dict[str, tuple[str, int]],
             seq_threshold: float, today: date) -> MilestoneProgress:
    """`suites`: runner -> (suite verdict, run id) of its latest run that ran the suite."""
    if milestone.kind == "seq-near-c":
        total, failing = _seq_near_c(milestone, standings, seq_threshold)
    elif milestone.kind == "par-speedup":
        total, failing = len(milestone.reports), _par_speedup(milestone, standings)
    else:
        verdict, run = suites.get(milestone.runner, ("", 0))
        total = 1
        failing = [] if verdict == "pass" else [Failing(milestone.runner, None, f"suite {verdict} in run {run}"
                                                        if verdict else "no run with the suite yet")]
    done = total - len(failing)
    met = total > 0 and not failing
    return MilestoneProgress(milestone.name, milestone.kind, milestone.due, done, total,
                             done / total if total else None, tuple(failing), met,
                             milestone.due is not None and today > milestone.due and not met)


def _seq_near_c(milestone: Milestone, standings: dict[str, Standing], seq_threshold: float) -> tuple[int, list]:
    threshold = milestone.threshold or seq_threshold
    counted = [s for s in standings.values() if s.state in LIVE and s.track == "seq"
               and (milestone.backend is None or s.backend == milestone.backend)]
    failing = [Failing(s.slug, s.ratio, f"{s.source} {s.ratio:.2f}x above {threshold:g}x" if s.ratio is not None
                       else "no ratio") for s in counted if s.ratio is None or s.ratio > threshold]
    failing.sort(key=lambda f: (f.value is not None, -(f.value or 0), f.name))
    return len(counted), failing


def _par_speedup(milestone: Milestone, standings: dict[str, Standing]) -> list[Failing]:
    failing = []
    for slug in milestone.reports:
        s = standings.get(slug)
        why = ("no such report" if s is None else f"{s.state}, not live" if s.state not in LIVE
               else "not a par report" if s.track != "par" else "not measured yet" if s.speedup is None
               else f"speedup {s.speedup:.2f}x below {milestone.target:g}x" if s.speedup < milestone.target else "")
        if why:
            failing.append(Failing(slug, s.speedup if s else None, why))
    return failing


def as_ratio(record: RecordFact | None, point: float | None) -> float | None:
    """A par run measures a speedup; reports state threads / speedup, so the two compare like seq ratios."""
    if record is None or record.track != "par":
        return point
    return record.threads / point if record.threads and point else None


def standing(record: RecordFact, runs: list[RunFact]) -> Standing:
    """A passing fix's head says what the report is worth once merged; a reproduce run what the branch does now."""
    convert = lambda point: as_ratio(record, point)  # noqa: E731
    passing = [r for r in runs if r.purpose == "fix" and r.verdict == "pass" and r.side("head")]
    measured = [r for r in runs if r.purpose == "reproduce" and r.side("head")]
    if passing:
        ratio, source = convert(passing[-1].side("head").point), "verified"
    elif measured:
        ratio, source = convert(measured[-1].side("head").point), "measured"
    else:
        ratio, source = record.ratio, "claimed" if record.ratio is not None else "none"
    speed = passing or [r for r in runs if r.side("head")]
    speedup = speed[-1].side("head").point if record.track == "par" and speed else None
    return Standing(record.slug, record.state, record.track, record.backend, ratio, source, speedup)


def latest_suites(runs: list[RunFact]) -> dict[str, tuple[str, int]]:
    return {r.runner: (r.suite_verdict, r.id) for r in runs if r.suite_verdict is not None}  # later runs win
