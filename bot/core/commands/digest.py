"""`/perf digest`: post the campaign digest now rather than at its scheduled time."""
from __future__ import annotations

from dataclasses import dataclass

from bot.core.commands.args import check_count, check_options

USAGE = "/perf digest"
SUMMARY = "preview the weekly digest in the answer (nothing is posted)"
WRITE = True


@dataclass(frozen=True)
class Digest:
    """Build and post the digest."""


def parse(args: tuple[str, ...], options: dict[str, str]) -> Digest:
    check_options("digest", options)
    check_count("digest", args, 0, 0, "arguments")
    return Digest()
