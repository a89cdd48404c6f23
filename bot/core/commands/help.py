"""`/perf help` (also `/perf` alone): the list of commands."""
from __future__ import annotations

from dataclasses import dataclass

USAGE = "/perf help"
SUMMARY = "show this list of commands"
WRITE = False


@dataclass(frozen=True)
class Help:
    """Answer with the help text."""


def parse(args: tuple[str, ...], options: dict[str, str]) -> Help:
    # Whatever follows `help` is ignored: someone asking for help should get it, not a usage error.
    return Help()
