"""`/perf status [SLUG]`: where a record stands."""
from __future__ import annotations

from dataclasses import dataclass

from bot.core.commands.args import check_count, check_options, slug

USAGE = "/perf status [SLUG]"
SUMMARY = "show where a record stands: state, verdict, fixes (without SLUG: the records of this issue or PR)"
WRITE = False


@dataclass(frozen=True)
class Status:
    """Report a record's state; `slug` None means the records this issue or PR is about."""

    slug: str | None = None


def parse(args: tuple[str, ...], options: dict[str, str]) -> Status:
    check_options("status", options)
    check_count("status", args, 0, 1, "SLUG")
    return Status(slug(args[0]) if args else None)
