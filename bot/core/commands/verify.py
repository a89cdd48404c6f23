"""`/perf verify [SLUG...] [runner=NAME] [samples=N]`: measure records again on a bench runner."""
from __future__ import annotations

import re
from dataclasses import dataclass

from bot.core.commands.args import CommandSyntaxError, check_count, check_options, shown, slug

USAGE = "/perf verify [SLUG...] [runner=NAME] [samples=N]"
SUMMARY = "queue a bench run of the records (without SLUG: the records of this issue or PR)"
WRITE = True

MAX_SLUGS = 20
MAX_SAMPLES = 200
RUNNER_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,62}")


@dataclass(frozen=True)
class Verify:
    """Bench the records; None leaves the runner and the sample count to the repository's config."""

    slugs: tuple[str, ...] = ()
    runner: str | None = None
    samples: int | None = None


def parse(args: tuple[str, ...], options: dict[str, str]) -> Verify:
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
