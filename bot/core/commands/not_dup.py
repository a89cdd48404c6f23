"""`/perf not-dup SLUG SLUG` (also `notdup`, `not_dup`): a person's verdict that two records are distinct."""
from __future__ import annotations

from dataclasses import dataclass

from bot.core.commands.args import check_options, two_slugs

USAGE = "/perf not-dup SLUG SLUG"
SUMMARY = "record that two records are not duplicates (dedup stops pairing them)"
WRITE = True


@dataclass(frozen=True)
class NotDup:
    """`a` and `b` are different findings; the order carries no meaning."""

    a: str
    b: str


def parse(args: tuple[str, ...], options: dict[str, str]) -> NotDup:
    check_options("not-dup", options)
    return NotDup(*two_slugs("not-dup", args))
