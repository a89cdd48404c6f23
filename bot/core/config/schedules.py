"""`[[milestones]]`, `[digest]` and `[guards]`: goals the weekly digest tracks, when it is posted, and when fixed
reports are measured again.

    [[milestones]]
    name = "every seq report at or under 2x"
    kind = "seq-near-c"         # seq-near-c (threshold, backend) | par-speedup (reports, target)
                                # | suite-passes (runner)
    due = 2026-12-31
    [digest]
    schedule = "mon 09:00"      # weekday and 24-hour time
    timezone = "Europe/Berlin"  # IANA name
    [guards]                    # on by default: after pushes pause for debounce_minutes, and/or at schedule
    debounce_minutes = 15
    schedule = "daily 03:00"
"""
from __future__ import annotations

import difflib
import re
import zoneinfo
from typing import Annotated, Literal

from pydantic import BeforeValidator, Field, model_validator

from bot.core.config.errors import FieldError
from bot.core.config.values import Backend, Count, Day, Declared, Flag, Minutes, Name, Positive, Section, Title, choice

WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
# Which milestone keys belong to which kind, and which of them a kind cannot do without.
KIND_KEYS = {"seq-near-c": ("threshold", "backend"), "par-speedup": ("reports", "target"), "suite-passes": ("runner",)}
REQUIRED = {"par-speedup": ("reports", "target"), "suite-passes": ("runner",)}
_WEEKLY = re.compile(r"([A-Za-z]+)\s+([01]?\d|2[0-3]):([0-5]\d)")
_DAILY = re.compile(r"daily\s+([01]?\d|2[0-3]):([0-5]\d)", re.IGNORECASE)
_LABEL = re.compile(r"[A-Za-z0-9][A-Za-z0-9 _.:/-]{0,49}")
_SLUG = re.compile(r"perf_[a-z0-9_]+")


def _weekly(value: object) -> str:
    found = _WEEKLY.fullmatch(value.strip()) if isinstance(value, str) else None
    word = found.group(1).lower() if found else ""
    day = next((d for d in WEEKDAYS if word in (d, d[:3])), None)
    if day is None or found is None:
        raise ValueError(f"{str(value)[:40]!r} must be a weekday and a 24-hour time, e.g. \"mon 09:00\"")
    return f"{day[:3]} {int(found.group(2)):02d}:{found.group(3)}"


def _daily_or_weekly(value: object) -> str:
    found = _DAILY.fullmatch(value.strip()) if isinstance(value, str) else None
    if found:
        return f"daily {int(found.group(1)):02d}:{found.group(2)}"
    try:
        return _weekly(value)
    except ValueError:
        raise ValueError(f"{str(value)[:40]!r} must be \"daily HH:MM\" or a weekday and a 24-hour time, e.g. "
                         "\"daily 03:00\" or \"mon 09:00\"") from None


def _timezone(value: object) -> str:
    known = zoneinfo.available_timezones()  # a name, never a path: ZoneInfo would read any file it names
    if not isinstance(value, str) or value not in known:
        close = difflib.get_close_matches(str(value), list(known), n=1)
        raise ValueError(f"{str(value)[:60]!r} is not an IANA time zone"
                         + (f"; did you mean {close[0]!r}?" if close else ', e.g. "Europe/Berlin" or "UTC"'))
    return value


def _label(value: object) -> str:
    if not isinstance(value, str) or not _LABEL.fullmatch(value):
        raise ValueError(f"{str(value)[:60]!r} must be a label of letters, digits and ' _.:/-' (at most 50)")
    return value


def _slugs(value: object) -> tuple[str, ...]:
    if not isinstance(value, (list, tuple)) or not value or not all(isinstance(v, str) and _SLUG.fullmatch(v)
                                                                    for v in value):
        raise ValueError('must list report slugs, e.g. ["perf_fib_par"]')
    if len(set(value)) != len(value):
        raise ValueError("names a report twice")
    return tuple(value)


Timezone = Annotated[str, BeforeValidator(_timezone)]
MilestoneKind = Literal["seq-near-c", "par-speedup", "suite-passes"]


class Milestone(Section):
    """A goal the digest tracks; only the keys of its kind are set."""

    name: Title = Field(description="a one-line name of at most 80 characters")
    kind: Annotated[MilestoneKind, BeforeValidator(choice(*KIND_KEYS))] = Field(
        description="seq-near-c | par-speedup | suite-passes")
    due: Day | None = None
    threshold: Positive | None = None  # seq-near-c; None: [verify] seq_threshold
    backend: Backend | None = None  # seq-near-c: only this backend's reports
    reports: Annotated[tuple[str, ...], BeforeValidator(_slugs)] = ()  # par-speedup
    target: Positive | None = None  # par-speedup: the speedup each named report must reach
    runner: Name | None = None  # suite-passes: a [[runners]] name

    @model_validator(mode="after")
    def _keys_fit_the_kind(self) -> Milestone:
        for required in REQUIRED.get(self.kind, ()):
            if required not in self.model_fields_set:
                raise FieldError(f"is required for {self.kind} milestones", required)
        for key in sorted(self.model_fields_set):
            owner = next((k for k, keys in KIND_KEYS.items() if key in keys), self.kind)
            if owner != self.kind:
                raise FieldError(f"is for {owner} milestones, not {self.kind}", key)
        return self


class DigestSchedule(Declared):
    schedule: Annotated[str, BeforeValidator(_weekly)] = "mon 09:00"  # normalized: three-letter weekday, HH:MM
    timezone: Timezone = "UTC"
    window_days: Count = 7
    label: Annotated[str, BeforeValidator(_label)] = "digest"


class GuardSettings(Section):
    """A record closed as fixed keeps its reproduction as a guard, measured again after pushes and/or on a
    schedule; a regressed guard is bisected."""

    after_push: Flag = True
    debounce_minutes: Minutes = Field(15, description="a burst of pushes is measured once, at the head it settles on")
    schedule: Annotated[str, BeforeValidator(_daily_or_weekly)] | None = Field(
        None, description='"daily HH:MM" or "mon HH:MM"; none: only after pushes')
    timezone: Timezone = "UTC"
    runner: Name | None = None  # None: the runner [[runners]] picks for the report's backend
    bisect: Flag = True
    max_bisect_commits: Count = Field(500, description="a longer first-parent range is refused")

    @property
    def enabled(self) -> bool:
        return self.after_push or self.schedule is not None
