"""Every `/perf` verb in one table: its command, usage, summary, whether it needs write access, and its parser.

Most verbs take slugs and nothing else, and are a row with a shape (`_slugs`); the few with options or a
grammar of their own (dup's `of`, close's reason, verify's runner and samples, cancel's run, bisect's range)
keep a small parser below. The table's order is the order of the help text.
"""
from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from bot.core.commands.args import CommandSyntaxError, check_count, check_options, shown, slug, two_slugs
from bot.core.tracker.refnames import COMMIT_SHA, branch_name_problem


@dataclass(frozen=True)
class Help:
    """Answer with the help text."""


@dataclass(frozen=True)
class Status:
    """Report a record's state; `slug` None means the records this issue or PR is about."""

    slug: str | None = None


@dataclass(frozen=True)
class Verify:
    """Bench the records; None leaves the runner and the sample count to the repository's config."""

    slugs: tuple[str, ...] = ()
    runner: str | None = None
    samples: int | None = None


@dataclass(frozen=True)
class Attach:
    """Attach the pull request the comment is on to the record `slug`."""

    slug: str


@dataclass(frozen=True)
class Detach:
    """Detach the pull request the comment is on from the record `slug`."""

    slug: str


@dataclass(frozen=True)
class Dup:
    """`slug` duplicates `of`; the word `of` keeps the direction impossible to misread."""

    slug: str
    of: str


@dataclass(frozen=True)
class NotDup:
    """`a` and `b` are different findings; the order carries no meaning."""

    a: str
    b: str


@dataclass(frozen=True)
class Merge:
    """Merge records `a` and `b`, in the order written."""

    a: str
    b: str


@dataclass(frozen=True)
class Close:
    """Close `slug`; `reason` is stored with the override, so it is never empty."""

    slug: str
    reason: str


@dataclass(frozen=True)
class Reopen:
    """Reopen `slug`."""

    slug: str


@dataclass(frozen=True)
class Digest:
    """Build the digest and show it in the answer."""


@dataclass(frozen=True)
class Cancel:
    """Cancel bench run `run`; None means the unfinished runs of this issue or PR."""

    run: int | None = None


@dataclass(frozen=True)
class Bisect:
    """None for a side the service fills in: the last known passing commit, the default branch's head."""

    slug: str
    good: str | None = None
    bad: str | None = None


# Every command a comment can hold: a closed union, so a flow that carries commands out `match`es them all.
Command = Help | Status | Verify | Attach | Detach | Dup | NotDup | Merge | Close | Reopen | Digest | Cancel | Bisect
Parser = Callable[[tuple[str, ...], dict[str, str]], Command]


@dataclass(frozen=True)
class Verb:
    name: str
    usage: str
    summary: str
    write: bool  # needs write access to the repository
    parse: Parser  # (positional arguments, options) -> the command; CommandSyntaxError when malformed


def _slugs(name: str, command: Callable[..., Command], least: int, most: int) -> Parser:
    """A verb that takes `least`..`most` slugs and no option: one slug each field, or a pair."""
    def parse(args: tuple[str, ...], options: dict[str, str]) -> Command:
        check_options(name, options)
        if least == most == 2:
            return command(*two_slugs(name, args))
        check_count(name, args, least, most, "SLUG" if most == 1 else "arguments")
        return command(*(slug(arg) for arg in args))
    return parse


def _ignore(args: tuple[str, ...], options: dict[str, str]) -> Help:
    return Help()  # whatever follows `help` is ignored: someone asking for help should get it, not a usage error


MAX_SLUGS, MAX_SAMPLES, MAX_REASON = 20, 200, 500
RUNNER_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,62}")
_RUN = re.compile(r"[0-9]{1,9}")  # run ids are database integers; anything longer is a typo, not a run


def _verify(args: tuple[str, ...], options: dict[str, str]) -> Verify:
    check_options("verify", options, ("runner", "samples"))
    # Bench time is the scarce resource: one comment must not be able to queue the whole campaign.
    unique = tuple(dict.fromkeys(args))  # a repeated slug is benched once, so it does not count twice
    check_count("verify", unique, 0, MAX_SLUGS, "SLUGs")
    slugs = tuple(dict.fromkeys(slug(arg) for arg in unique))
    runner = options.get("runner")
    if runner is not None and not RUNNER_RE.fullmatch(runner):
        raise CommandSyntaxError(
            f"runner='{shown(runner)}' is not a runner name (letters, digits, '_', '.', '-'; at most 63)")
    samples = None
    if "samples" in options:
        text = options["samples"]
        if not re.fullmatch(r"\d{1,4}", text) or not 1 <= int(text) <= MAX_SAMPLES:
            raise CommandSyntaxError(f"samples= must be a whole number from 1 to {MAX_SAMPLES}, got '{shown(text)}'")
        samples = int(text)
    return Verify(slugs, runner, samples)


def _dup(args: tuple[str, ...], options: dict[str, str]) -> Dup:
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


def _close(args: tuple[str, ...], options: dict[str, str]) -> Close:
    check_options("close", options, ("reason",))
    if "reason" in options and len(args) > 1:
        # `reason=two words` without quotes splits into two tokens; say so rather than "too many arguments".
        raise CommandSyntaxError('close takes one SLUG; quote a reason of several words: reason="..."')
    check_count("close", args, 1, 1, "SLUG")
    record = slug(args[0])
    reason = " ".join(options.get("reason", "").split())
    if not reason:
        raise CommandSyntaxError('close needs reason="...": an override without a verdict is logged with why')
    if len(reason) > MAX_REASON:
        raise CommandSyntaxError(f"the reason is {len(reason)} characters; keep it to {MAX_REASON}")
    return Close(record, reason)


def _cancel(args: tuple[str, ...], options: dict[str, str]) -> Cancel:
    check_options("cancel", options)
    check_count("cancel", args, 0, 1, "RUN")
    if not args:
        return Cancel()
    text = args[0]
    if text.startswith("#") and _RUN.fullmatch(text[1:]):
        raise CommandSyntaxError(f"write the bench run number without '#' ({text[1:]}); {text} is an issue or PR")
    if not _RUN.fullmatch(text) or int(text) == 0:
        raise CommandSyntaxError(f"RUN is a bench run number such as 12, got '{shown(text)}'")
    return Cancel(int(text))


def _bisect(args: tuple[str, ...], options: dict[str, str]) -> Bisect:
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


VERBS: dict[str, Verb] = {verb.name: verb for verb in (
    Verb("help", "/perf help", "show this list of commands", False, _ignore),
    Verb("status", "/perf status [SLUG]", "show where a record stands: state, verdict, fixes (without SLUG: the "
         "records of this issue or PR)", False, _slugs("status", Status, 0, 1)),
    Verb("verify", "/perf verify [SLUG...] [runner=NAME] [samples=N]", "queue a bench run of the records (without "
         "SLUG: the records of this issue or PR)", True, _verify),
    Verb("attach", "/perf attach SLUG", "make this pull request a fix of the record (`/perf verify` then measures "
         "its head)", True, _slugs("attach", Attach, 1, 1)),
    Verb("detach", "/perf detach SLUG", "this pull request is no longer a fix of the record", True,
         _slugs("detach", Detach, 1, 1)),
    Verb("dup", "/perf dup SLUG of SLUG", "mark the first record a duplicate of the second", True, _dup),
    Verb("not-dup", "/perf not-dup SLUG SLUG", "record that two records are not duplicates (dedup stops pairing "
         "them)", True, _slugs("not-dup", NotDup, 2, 2)),
    Verb("merge", "/perf merge SLUG SLUG", "merge two overlapping records into one report, proposed as a pull "
         "request", True, _slugs("merge", Merge, 2, 2)),
    Verb("close", '/perf close SLUG reason="..."', "close a record without a verdict: a maintainer override, "
         "logged with its reason", True, _close),
    Verb("reopen", "/perf reopen SLUG", "reopen a record that was closed by an override", True,
         _slugs("reopen", Reopen, 1, 1)),
    Verb("digest", "/perf digest", "preview the weekly digest in the answer (nothing is posted)", True,
         _slugs("digest", Digest, 0, 0)),
    Verb("cancel", "/perf cancel [RUN]", "cancel a queued or running bench run (RUN: its number; without it: "
         "every unfinished run of this issue or PR)", True, _cancel),
    Verb("bisect", "/perf bisect SLUG [GOOD..BAD]", "bisect the default branch's first-parent commits between GOOD "
         "(passing; default: the last commit a guard or fix passed on) and BAD (failing; default: the default "
         "branch)", True, _bisect),
)}
