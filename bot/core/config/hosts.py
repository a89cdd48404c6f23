"""`[notify]`, `[gpu]` and `[sandbox]`: who hears of milestones and blockers, how GPU reports run, and what a
report's code may see. `[sandbox]` is the operator's (the instance file, instance.py), never `.perfbot.toml`'s.

    [notify]
    people = ["lead"]           # mentioned in each notice; webhook_url = "https://..." (secret from the env)
    [gpu]
    run = ["./bin/bend", "run-metal", "{file}"]   # the program forced onto the GPU ({file} {threads} {input})
    auto = ["./bin/bend", "run", "{file}"]        # optional: the runtime choosing CPU or GPU itself
    [sandbox]
    readable = ["/opt/datasets"]   # folders on the bench host shown read-only inside (the sandbox's allow-list)
    processes = 256                # processes and threads of one run's whole tree (a fork bomb stays inside)

Memory stays `[verify] memory_mb` (under the operator's `[limits]`), for the whole tree. A runner's
`sandbox = "none"` in the instance file opts a dedicated bench host out of bubblewrap (never the default); the
limits and the clean environment still apply.
"""
from __future__ import annotations

import re
from typing import Annotated
from urllib.parse import urlsplit

from pydantic import BeforeValidator, Field

from bot.core.config.values import Argv, Count, Declared, Flag, Fraction, Positive, Section

# A GitHub login, or a team as org/team; the @ is optional in the file and added when mentioning.
_LOGIN = re.compile(r"@?([A-Za-z0-9](?:[A-Za-z0-9-]{0,38})(?:/[A-Za-z0-9][A-Za-z0-9_.-]{0,99})?)")
# A readable folder's spelling only. Which folders may be shown is one allow-list, the sandbox's own
# (adapters/runners/contain.shown_problem), applied when perfbot starts and again by every run.
_FOLDER = re.compile(r"/[A-Za-z0-9_.-]+(?:/[A-Za-z0-9_.-]+){0,30}")


def _logins(value: object) -> tuple[str, ...]:
    found = [_LOGIN.fullmatch(v) if isinstance(v, str) else None for v in value] \
        if isinstance(value, (list, tuple)) else [None]
    matched = [m for m in found if m]
    if not found or len(matched) != len(found):
        raise ValueError('must list GitHub logins or org/team names, e.g. ["lead", "org/perf"]')
    people = tuple(m.group(1) for m in matched)
    if len({p.lower() for p in people}) != len(people):
        raise ValueError("names someone twice")
    return people


def _url(value: object) -> str:
    parts = urlsplit(value) if isinstance(value, str) and len(value) <= 500 and value.isprintable() else None
    if not isinstance(value, str) or parts is None or parts.scheme not in ("http", "https") or not parts.hostname \
            or " " in value:
        raise ValueError(f"{str(value)[:60]!r} must be an http(s) URL, e.g. \"https://chat.example/hooks/perf\"")
    if parts.username or parts.password:
        raise ValueError("must not hold credentials: the file is public to the repository; set "
                         "PERFBOT_NOTIFY_SECRET in perfbot's environment instead")
    return value


def _folders(value: object) -> tuple[str, ...]:
    if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
        raise ValueError('must list absolute folders, e.g. ["/opt/datasets"]')
    for folder in value:
        if not _FOLDER.fullmatch(folder) or {".", ".."} & set(folder.split("/")):
            raise ValueError(f"{folder[:60]!r} must be an absolute folder of letters, digits and _.- without '..'")
    return tuple(value)


class NotifySettings(Declared):
    """Where notices go. The webhook's secret is never here: it comes from PERFBOT_NOTIFY_SECRET."""

    people: Annotated[tuple[str, ...], BeforeValidator(_logins)] = ()  # logins (or org/team) without the @
    webhook_url: Annotated[str, BeforeValidator(_url)] | None = None
    stuck_days: Count = Field(7, description="an open report without a root cause this long is a blocker")
    host_hours: Count = Field(1, description="a bench run waiting for its host this long means it is unreachable")

    @property
    def mentions(self) -> str:
        return " ".join(f"@{p}" for p in self.people)


class GpuSettings(Section):
    """The CPU side is `[run] language` at the sweep's thread counts (`[verify] threads`) on the same runner."""

    run: Argv | None = Field(None, description='the program forced onto the GPU, e.g. ["./bin/bend", "run-cuda", '
                             '"{file}"]')  # None: no [gpu]; a GPU report is then swept like a CPU one
    auto: Argv | None = None
    against_best_cpu: Flag = Field(True, description="the GPU must also beat the best CPU thread count")
    min_speedup: Positive = Field(1.0, description="the GPU's speedup over that CPU run a pass needs")
    auto_tolerance: Fraction = Field(0.1, description="`mode: auto` passes when auto is at most this much slower")


class SandboxSettings(Section):
    readable: Annotated[tuple[str, ...], BeforeValidator(_folders)] = ()
    processes: Count = 256
    output_mb: Count = 16
