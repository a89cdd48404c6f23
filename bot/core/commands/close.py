"""`/perf close SLUG reason="..."`: close a record without a verdict, a logged maintainer override."""
from __future__ import annotations

from dataclasses import dataclass

from bot.core.commands.args import CommandSyntaxError, check_count, check_options, slug

USAGE = '/perf close SLUG reason="..."'
SUMMARY = "close a record without a verdict: a maintainer override, logged with its reason"
WRITE = True

MAX_REASON = 500


@dataclass(frozen=True)
class Close:
    """Close `slug`; `reason` is stored with the override, so it is never empty."""

    slug: str
    reason: str


def parse(args: tuple[str, ...], options: dict[str, str]) -> Close:
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
