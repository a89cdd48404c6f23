"""`/perf cancel [RUN]`: stop a queued or running bench run."""
from __future__ import annotations

import re
from dataclasses import dataclass

from bot.core.commands.args import CommandSyntaxError, check_count, check_options, shown

USAGE = "/perf cancel [RUN]"
SUMMARY = "cancel a queued or running bench run (RUN: its number; without it: every unfinished run of this issue or PR)"
WRITE = True

# Run ids are database integers; anything longer than this is a typo, not a run.
_RUN = re.compile(r"[0-9]{1,9}")


@dataclass(frozen=True)
class Cancel:
    """Cancel bench run `run`; None means the latest run of this issue or PR."""

    run: int | None = None


def parse(args: tuple[str, ...], options: dict[str, str]) -> Cancel:
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
