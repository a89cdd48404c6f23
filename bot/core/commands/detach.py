"""`/perf detach SLUG`: this pull request is no longer a fix of a record."""
from __future__ import annotations

from dataclasses import dataclass

from bot.core.commands.args import check_count, check_options, slug

USAGE = "/perf detach SLUG"
SUMMARY = "this pull request is no longer a fix of the record"
WRITE = True


@dataclass(frozen=True)
class Detach:
    """Detach the pull request the comment is on from the record `slug`."""

    slug: str


def parse(args: tuple[str, ...], options: dict[str, str]) -> Detach:
    check_options("detach", options)
    check_count("detach", args, 1, 1, "SLUG")
    return Detach(slug(args[0]))
