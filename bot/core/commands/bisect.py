"""`/perf bisect SLUG [GOOD..BAD]`: find the commit that brought a fixed report's claim back."""
from __future__ import annotations

from dataclasses import dataclass

from bot.core.commands.args import CommandSyntaxError, check_count, check_options, shown, slug
from bot.core.refnames import COMMIT_SHA, branch_name_problem

USAGE = "/perf bisect SLUG [GOOD..BAD]"
SUMMARY = ("bisect the default branch's first-parent commits between GOOD (passing; default: the last commit a "
           "guard or fix passed on) and BAD (failing; default: the default branch)")
WRITE = True


@dataclass(frozen=True)
class Bisect:
    """None for a side the service fills in: the last known passing commit, the default branch's head."""

    slug: str
    good: str | None = None
    bad: str | None = None


def parse(args: tuple[str, ...], options: dict[str, str]) -> Bisect:
    check_options("bisect", options)
    check_count("bisect", args, 1, 2, "SLUG and GOOD..BAD")
    name = slug(args[0])
    if len(args) == 1:
        return Bisect(name)
    text = args[1]
    if text.count("..") != 1 or "..." in text:
        raise CommandSyntaxError(f"write the range as GOOD..BAD (two dots), e.g. v1.2..main or a1b2c3d..; "
                                 f"got '{shown(text)}'")
    good, bad = text.split("..")
    if not good and not bad:
        raise CommandSyntaxError("the range '..' names neither end: leave it out to use the defaults")
    return Bisect(name, _commit(good, "GOOD"), _commit(bad, "BAD"))


def _commit(text: str, side: str) -> str | None:
    """A commit sha, a branch or a tag: any other text never reaches git (a leading '-' would be an option)."""
    if not text:
        return None
    if COMMIT_SHA.fullmatch(text):
        return text.lower()
    problem = branch_name_problem(text)
    if problem is not None or len(text) > 200:
        raise CommandSyntaxError(f"{side} '{shown(text)}' is not a commit, branch or tag: "
                                 f"{problem or 'it is longer than 200 characters'}")
    return text
