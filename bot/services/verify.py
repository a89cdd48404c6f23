"""Verify: measure a report's reproduction against its C translation at a commit, and decide with intervals.

For each side (base, then head) the runner prepares the project, the report's two programs are written to
files, the C translation is compiled, one warm-up run of each checks that both print the same result (a
1-to-1 translation computes the same thing; a mismatch is reported, not timed), and then runs alternate
language, C, language, C ... until the interval decides or the time budget is spent.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable

from bot.core.records import PerfIssue
from bot.core.repo_config import RepoConfig
from bot.core.verify_plan import fill, from_root, programs
from bot.core.stats import FAIL, INCONCLUSIVE, PASS, Interval, SamplingPlan, decide_at_least, ratio_interval
from bot.core.suite import SuiteResult, compare_suites
from bot.services.suite import measure_suites

MISMATCH, ERROR = "mismatch", "error"
Progress = Callable[[str, int, int], None]  # (side, pairs taken, most pairs)


@dataclass
class Side:
    """What one commit measured: every sample kept. For a par report `language` holds the program's times on
    one thread and `c` its times on the claimed thread count: the ratio of the two is the speedup."""

    label: str
    sha: str
    language: list[float] = field(default_factory=list)
    c: list[float] = field(default_factory=list)
    par: bool = False
    interval: Interval | None = None
    decision: str = ""  # pass | fail | inconclusive once the side is decided; empty while sampling
    output: str = ""

    def as_dict(self) -> dict:
        names = ("one_thread_seconds", "n_threads_seconds") if self.par else ("language_seconds", "c_seconds")
        return {"side": self.label, "sha": self.sha, names[0]: self.language, names[1]: self.c,
                "interval": self.interval.as_dict() if self.interval else None, "decision": self.decision,
                "output": self.output}


@dataclass
class Outcome:
    verdict: str
    message: str
    sides: list[Side]
    runner: str
    suite: SuiteResult | None = None

    def as_dict(self) -> dict:
        return {"verdict": self.verdict, "message": self.message, "runner": self.runner,
                "sides": [s.as_dict() for s in self.sides], "suite": self.suite.as_dict() if self.suite else None}


def verify(record: PerfIssue, config: RepoConfig, runner, head: str, base: str | None = None,
           progress: Progress | None = None, observe: Callable[[list[Side]], None] | None = None) -> Outcome:
    """`progress` hears (side, pairs taken, most pairs) after each pair; `observe` gets the sides themselves,
    samples and interval so far, for a comment that shows the numbers while they come in."""
    language, translation = programs(record, config)
    par = record.track == "par"
    sides = [Side("base", base, par=par)] if base else []
    sides.append(Side("head", head, par=par))
    plan = SamplingPlan(config.min_samples, config.max_samples)
    suite = None

    def tick(label: str, taken: int, most: int) -> None:
        if progress:
            progress(label, taken, most)
        if observe:
            observe(sides)

    with runner.exclusive():
        for side in sides:
            problem = _measure(side, record, language, translation, config, runner, plan, tick)
            if problem is not None:
                return Outcome(problem[0], problem[1], sides, runner.name)
        if config.suite is not None and base and sides[-1].decision == PASS:
            # Only a fix worth merging pays for the suite: it must not slow anything else down.
            base_times, head_times = measure_suites(config, runner, runner.prepare(base), runner.prepare(head),
                                                    config.suite.samples)
            suite = compare_suites(base_times, head_times, config.suite.tolerance)
    head_side = sides[-1]
    ratio = head_side.interval
    if record.track == "par":
        target = record.threads * config.par_efficiency
        message = (f"{record.slug} on {runner.name}: speedup on {record.threads} threads {ratio.point:.2f}x "
                   f"[{ratio.low:.2f}, {ratio.high:.2f}] at {head[:12]} against {target:g}x "
                   f"({config.par_efficiency:g} of ideal)")
    else:
        message = (f"{record.slug} on {runner.name}: language/C {ratio.point:.2f}x "
                   f"[{ratio.low:.2f}, {ratio.high:.2f}] at {head[:12]} against the {config.seq_threshold:g}x threshold")
    if suite is not None and suite.verdict == FAIL:
        return Outcome(FAIL, f"{message}; {suite.summary()}", sides, runner.name, suite)
    if suite is not None:
        message += f"; suite: {suite.summary()}"
    return Outcome(head_side.decision, message, sides, runner.name, suite)


def _measure(side: Side, record: PerfIssue, language: str, translation: str, config: RepoConfig, runner,
             plan: SamplingPlan, progress: Progress) -> tuple[str, str] | None:
    workspace = runner.prepare(side.sha)
    folder = runner.run_dir(workspace, record.slug)
    runner.write_file(folder / "program.bend", language)
    runner.write_file(folder / "translation.c", translation)
    binary = folder / "translation"
    compiled = runner.run(fill(config.c_compile, file=str(folder / "translation.c"), out=str(binary)), folder,
                          config.timeout_seconds)
    if not compiled.ok:
        return ERROR, f"the C translation does not compile at {side.sha[:12]}: {compiled.stderr.strip()[-400:]}"
    # Every program runs in the report's own folder, the only place a sandboxed run may write: the built
    # workspace is shared by later runs and must stay as built. `./x` in a template names the project's x.
    argv_language = from_root(fill(config.run_language, file=str(folder / "program.bend"),
                                   threads=str(record.threads or 1)), workspace)
    argv_c = fill(config.c_run, out=str(binary), file=str(folder / "translation.c"))
    par = record.track == "par"
    if par:
        # A speedup is one thread's time over N threads': the pair timed is the program at 1 and at N.
        argv_c, argv_language = argv_language, from_root(
            fill(config.run_language, file=str(folder / "program.bend"), threads="1"), workspace)
    first_language = runner.run(argv_language, folder, config.timeout_seconds)
    first_c = runner.run(argv_c, folder, config.timeout_seconds)
    names = ("the program on 1 thread", f"the program on {record.threads} threads") if par else \
        ("the program", "the C translation")
    for name, result in zip(names, (first_language, first_c)):
        if result.timed_out:
            return ERROR, f"{name} ran past the {config.timeout_seconds}s limit at {side.sha[:12]}"
        if result.returncode != 0:
            return ERROR, f"{name} exited {result.returncode} at {side.sha[:12]}: {result.stderr.strip()[-300:]}"
    if first_language.stdout.strip() != first_c.stdout.strip():
        return MISMATCH, (f"at {side.sha[:12]} {names[0]} prints {first_language.stdout.strip()[:80]!r} but "
                          f"{names[1]} prints {first_c.stdout.strip()[:80]!r}: not the same computation")
    side.output = first_c.stdout.strip()
    deadline = time.monotonic() + config.budget_seconds
    while True:
        for argv, cwd, samples in ((argv_language, folder, side.language), (argv_c, folder, side.c)):
            result = runner.run(argv, cwd, config.timeout_seconds)
            if not result.ok:
                return ERROR, f"a timed run failed at {side.sha[:12]} (exit {result.returncode}, timed out: {result.timed_out})"
            samples.append(result.seconds)
        if par:
            step, interval = plan.next_step(side.language, side.c, record.threads * config.par_efficiency,
                                            decide_at_least)
        else:
            step, interval = plan.next_step(side.language, side.c, config.seq_threshold)
        side.interval = interval or side.interval
        progress(side.label, len(side.c), plan.maximum)
        if step != "sample":
            side.decision = step
            return None
        if time.monotonic() >= deadline:
            side.interval = ratio_interval(side.language, side.c)
            side.decision = INCONCLUSIVE
            return None

