"""`/perf dup SLUG of SLUG`: a person's verdict that one record duplicates another."""
from __future__ import annotations

from dataclasses import dataclass

from bot.core.commands.args import CommandSyntaxError, check_options, shown, slug

USAGE = "/perf dup SLUG of SLUG"
SUMMARY = "mark the first record a duplicate of the second"
WRITE = True


@dataclass(frozen=True)
class Dup:
    """`slug` duplicates `of`; the word `of` keeps the direction impossible to misread."""

    slug: str
    of: str


def parse(args: tuple[str, ...], options: dict[str, str]) -> Dup:
    check_options("dup", options)
    if len(args) == 2:
        raise CommandSyntaxError(f"write 'of' between the two records: dup {shown(args[0])} of {shown(args[1])}")
    if len(args) != 3 or args[1].lower() != "of":
        got = " ".join(shown(arg) for arg in args) or "nothing"
        raise CommandSyntaxError(f"dup takes a record, the word 'of', and the record it duplicates; got {got}")
    first, second = slug(args[0]), slug(args[2])
    if first == second:
        raise CommandSyntaxError(f"a record cannot be a duplicate of itself ({first})")
    return Dup(first, second)
