"""Verify: measure a report's reproduction against what it compares with at a commit, and decide with intervals.

What the program is compared with: its C translation (default), a reference implementation (`reference:`,
services/bench/references.py), or for a par report itself at a sweep of thread counts (services/bench/sweep.py). For
each input the report gives and each side (base, then head) the runner prepares the project, the program is
written under the file name `.perfbot.toml` gives, the other side is made ready (the translation compiled,
the reference built), one warm-up run of each checks that both print the same result under `[run] output`
(a mismatch is reported, not timed), and then runs alternate program, other, program, other ... until the
interval decides or the time budget is spent. Each sample keeps wall, user and system time, page faults and
the runtime's own metrics; the ratio is made of `[verify] measure`.
"""
from __future__ import annotations

import statistics
from collections.abc import Callable
from dataclasses import dataclass, field

from bot.core.config import PerfbotFile, fill
from bot.core.reports.records import PerfIssue
from bot.core.tracker.outgoing import window
from bot.core.verify.bench_view import count_text
from bot.core.verify.claim_size import ClaimSize, judge_claim, number
from bot.core.verify.gain import fix_gain, gain_text
from bot.core.verify.gpu_modes import AUTO, GPU, auto_target, modes_summary
from bot.core.verify.noise import noise
from bot.core.verify.outputs import mismatch, normalised
from bot.core.verify.run_parts import RunResult, SideResult
from bot.core.verify.scaling import summary as sweep_summary
from bot.core.verify.scaling import sweep_text
from bot.core.verify.stats import FAIL, INCONCLUSIVE, PASS, Interval, SamplingPlan
from bot.core.verify.suite import SuiteResult, compare_suites
from bot.core.verify.sweep_checks import IMPLAUSIBLE, implausible_text, knob_problem
from bot.core.verify.sweep_result import SweepSummary
from bot.core.verify.units import unit_of
from bot.core.verify.verify_plan import (
    configured,
    from_root,
    inputs_of,
    program_name,
    programs,
    reference_of,
    with_input,
    with_measure,
)
from bot.errors import Invalid
from bot.services.bench.gpu_sweep import is_gpu_report, measure_gpu
from bot.services.bench.measures import timed_rounds, wrap_for_measure
from bot.services.bench.references import ReferenceTarget, prepare_reference
from bot.services.bench.suite import measure_suites
from bot.services.bench.sweep import ERROR, MISMATCH, counts_for, measure_sweep

Progress = Callable[[str, int, int], None]  # (side, pairs taken, most pairs)
MEASURE_NAMES = {"wall": "wall time", "user": "user time", "instructions": "instructions"}


@dataclass
class Side:
    """What one commit measured for one input: every sample kept. For a par report `language` holds the
    program's measure on one thread and `c` on the claimed thread count: the ratio of the two is the speedup;
    `sweep` holds every count's samples (services/bench/sweep.py). With a reference, `c` holds the reference's
    measure."""

    label: str
    sha: str
    language: list[float] = field(default_factory=list)
    c: list[float] = field(default_factory=list)
    par: bool = False
    interval: Interval | None = None
    decision: str = ""  # pass | fail | inconclusive | implausible once the side is decided; empty while sampling
    output: str = ""
    input: str | None = None
    against: str = "C"  # C | reference NAME@sha | N threads
    factor: float | None = None  # a reference: the factor of it the program must stay within
    measure: str = "wall"
    runs: dict = field(default_factory=lambda: {"language": [], "c": []})  # per sample: times, faults, metrics
    sweep: dict = field(default_factory=dict)  # par: thread count -> samples, taken round-robin
    sweep_rules: tuple = ()  # par: (claimed threads, par_efficiency, flatten_gain)
    modes: dict = field(default_factory=dict)  # a GPU report: gpu (and auto) -> samples (services/bench/gpu_sweep.py)

    def metric_medians(self, which: str) -> dict[str, float]:
        names = {name for run in self.runs[which] for name in run.get("metrics", {})}
        return {name: statistics.median(r["metrics"][name] for r in self.runs[which] if name in r.get("metrics", {}))
                for name in sorted(names)}

    def summary(self, decision: str | None = None) -> str:
        """One line for a terminal: medians, ratio, pairs, decision (as said), and the runtime's metrics beside them."""
        fmt = unit_of(self.measure).text
        first = ("the CPU" if self.modes else "1 thread") if self.par else "language"
        second = self.against
        line = (f"{self.label:<5} {self.sha[:12]}{' input ' + self.input if self.input else ''}  "
                f"{first} {fmt(statistics.median(self.language))}  {second} {fmt(statistics.median(self.c))}  "
                f"{_ratio_text(self.interval)}  "
                f"{len(self.c)} pairs  {decision or self.decision}")
        return line + _metrics_text(self)

    def stored(self) -> SideResult:
        """This side as a run stores and shows it (core/verify/run_parts.py spells its JSON)."""
        return SideResult(self.label, self.sha, tuple(self.language), tuple(self.c), self.par, self.interval,
                          self.decision, window(self.output) if self.output else self.output, self.input,
                          self.against, self.measure, self.factor, tuple(self.runs["language"]),
                          tuple(self.runs["c"]), self.metric_medians("language"), self.metric_medians("c"),
                          self.sweep_summary() if self.sweep else None,
                          modes_summary(self.sweep, self.modes.get(GPU, []), self.modes.get(AUTO, []))
                          if self.modes else None)

    def as_dict(self) -> dict:
        return self.stored().as_dict()

    def sweep_summary(self) -> SweepSummary:
        # The claimed count's point is the verdict's interval (a GPU side's interval is the GPU's, not a count's).
        return sweep_summary({n: v for n, v in self.sweep.items() if v}, *self.sweep_rules,
                             decided=None if self.modes else self.interval)


@dataclass
class Outcome:
    verdict: str
    message: str
    sides: list[Side]
    runner: str
    suite: SuiteResult | None = None
    claim: ClaimSize | None = None  # the report's ratio against the one measured where the claim was measured
    gain: Interval | None = None  # a fix: the program's base time over its head time (core/verify/gain.py)
    already_in_base: bool = False  # the fix commit is an ancestor of the base: nothing left to merge
    noisy: str | None = None  # why the host was too busy for these times to mean much (core/verify/noise.py)

    def mark_in_base(self, base: str) -> None:
        self.already_in_base = True
        self.message = f"already in base: the fix is an ancestor of {base[:12]}; {self.message}"

    def stored(self) -> RunResult:
        """The outcome as a run stores and shows it (core/verify/run_parts.py spells its JSON)."""
        return RunResult(tuple(s.stored() for s in self.sides), self.verdict, self.message, self.runner,
                         self.suite, self.claim, self.gain, self.already_in_base,
                         self.noisy)

    def as_dict(self) -> dict:
        return self.stored().as_dict()


@dataclass(frozen=True)
class _Pair:
    """The two argument lists timed against each other, where they run, and what to call them."""

    first: list[str]
    second: list[str]
    first_cwd: object
    second_cwd: object
    names: tuple[str, str]


def verify(record: PerfIssue, config: PerfbotFile, runner, head: str, base: str | None = None,
           progress: Progress | None = None, observe: Callable[[list[Side]], object] | None = None) -> Outcome:
    """`progress` hears (side, pairs taken, most pairs) after each pair; `observe` gets the sides themselves,
    samples and interval so far, for a comment that shows the numbers while they come in."""
    config = with_measure(config, record)
    language, translation = programs(record, config)
    no_knob = knob_problem(record, config, "[run] language in .perfbot.toml")
    if no_knob is not None:  # a sweep that can vary nothing is refused before it measures anything
        raise Invalid(no_knob)
    reference = reference_of(record, config)
    par = record.track == "par"
    sides = []
    for given in inputs_of(record):
        sides += [Side("base", base, par=par, input=given)] if base else []
        sides.append(Side("head", head, par=par, input=given))
    plan = SamplingPlan(config.verify.min_samples, config.verify.max_samples)
    suite = None

    def tick(label: str, taken: int, most: int) -> None:
        if progress:
            progress(label, taken, most)
        if observe:
            observe(sides)

    with runner.exclusive():
        target = prepare_reference(reference, runner, record, language, config) if reference else None
        counter: dict = {}
        gpu = is_gpu_report(record, config)
        counts = counts_for(record, config, runner) if par and not gpu else ()
        for side in sides:
            if gpu:
                side.sweep_rules = (1, config.verify.par_efficiency, config.verify.flatten_gain)
                problem = measure_gpu(side, record, language, config, runner, plan, tick, counter)
            elif par:
                problem = measure_sweep(side, record, language, config, runner, plan, tick, counter, counts)
            else:
                problem = _measure(side, record, language, translation, config, runner, plan, tick, target, counter)
            if problem is not None:
                return _outcome(problem[0], problem[1], sides, runner)
        if config.suite is not None and base and all(s.decision == PASS for s in sides if s.label == "head"):
            # Only a fix worth merging pays for the suite: it must not slow anything else down.
            base_times, head_times = measure_suites(config, runner, runner.prepare(base), runner.prepare(head),
                                                    config.suite.samples)
            suite = compare_suites(base_times, head_times, config.suite.tolerance)
    heads = [s for s in sides if s.label == "head"]
    message = "; ".join(_claim_text(record, config, runner, s, target, n == 0) for n, s in enumerate(heads)) + \
        _honesty_note(heads[-1])
    decisions = {s.decision for s in heads}
    verdict = IMPLAUSIBLE if IMPLAUSIBLE in {s.decision for s in sides} else \
        FAIL if FAIL in decisions else PASS if decisions == {PASS} else INCONCLUSIVE
    # The claim is about the code before any fix: the base side when there is one, else the head.
    claim = judge_claim(record, next((s.interval for s in sides if s.interval and not s.modes), None),
                        config.verify.claim_factor) if verdict != IMPLAUSIBLE else None  # not sized on a mismeasure
    if claim is not None and claim.off:
        message += f"; {claim.text()}"
    base_side = next((s for s in sides if s.label == "base" and not s.par), None)
    gain = fix_gain(base_side.language, heads[0].language) if base_side else None
    if gain is not None:
        message += f"; the program itself: {gain_text(gain)}, base to head"
    noisy = noise([r for s in sides for runs in s.runs.values() for r in runs], heads[-1].measure, config.quiet)
    if noisy is not None:
        message += f"; noisy: {noisy} while it measured, so these times may reflect contention"
    if suite is not None and suite.verdict == FAIL:
        return _outcome(FAIL, f"{message}; {suite.summary()}", sides, runner, suite, claim, gain, noisy)
    if suite is not None:
        message += f"; suite: {suite.summary()}"
    return _outcome(verdict, message, sides, runner, suite, claim, gain, noisy)


def _outcome(verdict: str, message: str, sides: list[Side], runner, suite=None, claim=None, gain=None,
             noisy: str | None = None) -> Outcome:
    """Every result of a runner that opted out of the sandbox says so, wherever it is shown."""
    if getattr(runner, "sandbox", "bwrap") == "none":
        message += f' (run uncontained: runner {runner.name} has sandbox = "none")'
    return Outcome(verdict, message, sides, runner.name, suite, claim, gain, noisy=noisy)


def _ratio_text(interval: Interval | None) -> str:
    if interval is None:
        return "ratio not measured"
    return f"ratio {number(interval.point)}x [{number(interval.low)}, {number(interval.high)}]"


def _claim_text(record: PerfIssue, config: PerfbotFile, runner, side: Side, target: ReferenceTarget | None,
                first: bool = True) -> str:
    at = f"at {side.sha[:12]}" + (f" input {side.input}" if side.input else "")
    measure = f" ({MEASURE_NAMES.get(side.measure, side.measure)})"  # the verdict says which measure decided it
    prefix = f"{record.slug} on {runner.name}: " if first else ""
    bounds = _ratio_text(side.interval).removeprefix("ratio ")
    if side.modes:
        target_speedup = (auto_target(config.gpu.auto_tolerance) if AUTO in side.modes else config.gpu.min_speedup)
        text = f"speedup of {side.against}{measure} {bounds} {at}, judged against {target_speedup:.3g}x"
    elif record.track == "par":
        target_speedup = (record.threads or 1) * config.verify.par_efficiency  # programs() refused par without threads
        text = (f"speedup on {record.threads} threads{measure} {bounds} {at} against "
                f"{target_speedup:g}x ({config.verify.par_efficiency:g} of ideal)")
        if side.decision == IMPLAUSIBLE and side.interval is not None:
            text += f"; {implausible_text(side.interval, record.threads or 1)}"
        if side.sweep:
            text += f"; {sweep_text(side.sweep_summary())}"
    elif target is not None:
        text = f"head/{target.label}{measure} {bounds} {at}, limit within {target.factor:g}x of the reference"
    else:
        text = f"language/C{measure} {bounds} {at} against the {config.verify.seq_threshold:g}x threshold"
    return prefix + text + _metrics_text(side)


def _metrics_text(side: Side) -> str:
    first, second = side.metric_medians("language"), side.metric_medians("c")
    shown = [f"{name} {count_text(first.get(name))} vs {count_text(second.get(name))}" for name in sorted({*first,
                                                                                                           *second})]
    return f" ({', '.join(shown)})" if shown else ""




def _honesty_note(side: Side) -> str:
    """Wall time carries the kernel's work (page faults, I/O); say so when it is a large part of a sample."""
    if side.measure != "wall":
        return ""
    other = "the C translation" if side.against == "C" else side.against
    for which, name in (("language", "the program"), ("c", other)):
        runs = [r for r in side.runs[which] if r.get("system") is not None and r["wall"] > 0]
        if runs and statistics.median(r["system"] / r["wall"] for r in runs) > 0.3:
            faults = statistics.median(r.get("faults") or 0 for r in runs)
            return (f"; note: {name} spends over 30% of its wall time in the kernel ({faults:.0f} page faults a run): "
                    'measure = "user" or "instructions" keeps that out of the ratio')
    return ""


def _pair(side: Side, record: PerfIssue, language: str, translation: str, config: PerfbotFile, runner,
          target: ReferenceTarget | None) -> tuple[_Pair | None, tuple[str, str] | None]:
    workspace = runner.prepare(side.sha)
    folder = runner.run_dir(workspace, record.slug)
    program = folder / program_name(record, config)
    runner.write_file(program, language)
    threads = str(record.threads or 1)
    # Every program runs in the report's own folder, the only place a sandboxed run may write: the built
    # workspace is shared by later runs and must stay as built. `./x` in a template names the project's x.
    template = with_input(configured(config.run.language, "[run] language"), side.input)
    argv_language = from_root(fill(template, file=str(program), threads=threads), workspace)
    if target is not None:
        side.against, side.factor = target.label, target.factor
        return _Pair(argv_language, target.argv(side.input, threads), folder, target.folder,
                     ("the program", f"the reference {target.label}")), None
    runner.write_file(folder / "translation.c", translation)
    binary = folder / "translation"
    compiled = runner.run(fill(config.run.c_compile, file=str(folder / "translation.c"), out=str(binary)), folder,
                          config.verify.timeout_seconds)
    if not compiled.ok:
        return None, (ERROR, "the C translation does not compile: " + compiled.failure(
            "the compiler", f"at {side.sha[:12]}", config.verify.timeout_seconds, config.verify.memory_mb))
    argv_c = fill(with_input(config.run.c_run, side.input), out=str(binary), file=str(folder / "translation.c"))
    return _Pair(argv_language, argv_c, folder, folder, ("the program", "the C translation")), None


def _measure(side: Side, record: PerfIssue, language: str, translation: str, config: PerfbotFile, runner,
             plan: SamplingPlan, progress: Progress, target: ReferenceTarget | None,
             counter: dict) -> tuple[str, str] | None:
    side.measure = config.measure
    pair, problem = _pair(side, record, language, translation, config, runner, target)
    if pair is None:  # _pair gives a problem exactly when it gives no pair
        return problem
    first_argv, second_argv = (wrap_for_measure(argv, config, runner, pair.first_cwd, counter)
                               for argv in (pair.first, pair.second))
    first = runner.run(first_argv, pair.first_cwd, config.verify.timeout_seconds)
    second = runner.run(second_argv, pair.second_cwd, config.verify.timeout_seconds)
    at = f"at {side.sha[:12]}" + (f" (input {side.input})" if side.input else "")
    for name, result in zip(pair.names, (first, second), strict=True):
        if not result.ok:
            return ERROR, result.failure(name, at, config.verify.timeout_seconds, config.verify.memory_mb)
    different = mismatch(first.stdout, second.stdout, config.run, pair.names, at)
    if different is not None:
        return MISMATCH, different
    side.output = normalised(second.stdout, config.run)
    jobs = {"language": (first_argv, pair.first_cwd, "a timed run"), "c": (second_argv, pair.second_cwd, "a timed run")}

    def keep(which: str, value: float, run: dict) -> None:
        (side.language if which == "language" else side.c).append(value)
        side.runs[which].append(run)

    limit = target.factor if target is not None else config.verify.seq_threshold
    return timed_rounds(side, ["language", "c"], jobs.__getitem__, keep,
                        lambda: plan.next_step(side.language, side.c, limit), config=config, runner=runner,
                        counter=counter, plan=plan, progress=progress, at=at, rotate=False)
