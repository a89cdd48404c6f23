"""`/perf merge SLUG SLUG`: fold two overlapping records into one report."""
from __future__ import annotations

from dataclasses import dataclass

from bot.core.commands.args import check_options, two_slugs

USAGE = "/perf merge SLUG SLUG"
SUMMARY = "merge two overlapping records into one report, proposed as a pull request"
WRITE = True


@dataclass(frozen=True)
class Merge:
    """Merge records `a` and `b`, in the order written."""

    a: str
    b: str


def parse(args: tuple[str, ...], options: dict[str, str]) -> Merge:
    check_options("merge", options)
    return Merge(*two_slugs("merge", args))
