"""`/perf attach SLUG`: make this pull request a fix of a record."""
from __future__ import annotations

from dataclasses import dataclass

from bot.core.commands.args import check_count, check_options, slug

USAGE = "/perf attach SLUG"
SUMMARY = "make this pull request a fix of the record (`/perf verify` then measures its head)"
WRITE = True


@dataclass(frozen=True)
class Attach:
    """Attach the pull request the comment is on to the record `slug`."""

    slug: str


def parse(args: tuple[str, ...], options: dict[str, str]) -> Attach:
    check_options("attach", options)
    check_count("attach", args, 1, 1, "SLUG")
    return Attach(slug(args[0]))
