"""`/perf reopen SLUG`: undo a close override."""
from __future__ import annotations

from dataclasses import dataclass

from bot.core.commands.args import check_count, check_options, slug

USAGE = "/perf reopen SLUG"
SUMMARY = "reopen a record that was closed by an override"
WRITE = True


@dataclass(frozen=True)
class Reopen:
    """Reopen `slug`."""

    slug: str


def parse(args: tuple[str, ...], options: dict[str, str]) -> Reopen:
    check_options("reopen", options)
    check_count("reopen", args, 1, 1, "SLUG")
    return Reopen(slug(args[0]))
