"""A PAR verification's scaling sweep: the program timed at every thread count, round-robin, on one runner.

Which counts: `[verify] threads`, else 1..the runner's cores, always with 1 and the claimed count
(core/verify/scaling.py). One warm-up run at each count must print what one thread prints (a program that computes
something else on 8 threads is a mismatch, not a speedup). Then each round runs every count once, up one
round and down the next, until the claimed count's speedup interval decides against ideal x efficiency
(the sequential plan of core/verify/stats.py, as before sweeps) or the budget is spent. Counts whose runs do
not differ (the same argv, the same thread count printed) are a configuration error; an interval past the
ideal samples on to the budget's end and is `implausible` (core/verify/sweep_checks.py).
"""
from __future__ import annotations

from bot.core.config import PerfbotFile, fill
from bot.core.reports.records import PerfIssue
from bot.core.verify.outputs import metrics_of, mismatch, normalised
from bot.core.verify.scaling import sweep_counts
from bot.core.verify.stats import SamplingPlan, decide_at_least
from bot.core.verify.sweep_checks import IMPLAUSIBLE, above_ideal, plausible_step, same_points
from bot.core.verify.verify_plan import configured, from_root, program_name, with_input
from bot.errors import Invalid, UserError
from bot.services.bench.measures import ERROR, MISMATCH, timed_rounds, wrap_for_measure


def host_cores(runner) -> int | None:
    """The runner's cores when it can tell (local: this process's CPUs; ssh: getconf on the host)."""
    cores = getattr(runner, "cores", None)
    try:
        return cores() if callable(cores) else None
    except UserError:
        return None  # the sweep still has 1 and the claimed count


def counts_for(record: PerfIssue, config: PerfbotFile, runner) -> tuple[int, ...]:
    configured = config.verify.threads
    return sweep_counts(configured, None if configured else host_cores(runner), record.threads)


def warm_up(argv: dict, name, runner, folder, config: PerfbotFile, at: str):
    """One run of each argument list, in order: each must end well and print what the first printed.
    Returns (every run's result by key, None), or ({}, (verdict, message)) for the first that does not."""
    results: dict = {}
    for key, args in argv.items():
        result = runner.run(args, folder, config.verify.timeout_seconds)
        if not result.ok:
            return {}, (ERROR, result.failure(name(key), at, config.verify.timeout_seconds, config.verify.memory_mb))
        if results:
            first_key, first = next(iter(results.items()))
            different = mismatch(first.stdout, result.stdout, config.run, (name(first_key), name(key)), at)
            if different is not None:
                return {}, (MISMATCH, different)
        results[key] = result
    return results, None


def points_must_differ(argv: dict, warmed: dict, config: PerfbotFile) -> None:
    """Identical points are a configuration error, not a verdict (core/verify/sweep_checks.py)."""
    counts = {n: args for n, args in argv.items() if isinstance(n, int)}
    printed = {n: metrics_of(r.stdout, r.stderr, config.run) for n, r in warmed.items() if isinstance(n, int)}
    problem = same_points(counts, printed, "[run] language in .perfbot.toml")
    if problem is not None:
        raise Invalid(problem)


def _threads(n: int) -> str:
    return f"the program on {n} thread{'s' if n != 1 else ''}"


def measure_sweep(side, record: PerfIssue, language: str, config: PerfbotFile, runner, plan: SamplingPlan,
                  progress, counter: dict, counts: tuple[int, ...]) -> tuple[str, str] | None:
    """Fill `side` (verify.Side): `sweep` per count, `language` = 1 thread, `c` = the claimed count."""
    side.measure = config.measure
    claimed = record.threads or 1
    side.against = f"{claimed} threads"
    side.sweep_rules = (claimed, config.verify.par_efficiency, config.verify.flatten_gain)
    workspace = runner.prepare(side.sha)
    folder = runner.run_dir(workspace, record.slug)
    program = folder / program_name(record, config)
    runner.write_file(program, language)
    template = with_input(configured(config.run.language, "[run] language"), side.input)
    argv = {n: wrap_for_measure(from_root(fill(template, file=str(program), threads=str(n)), workspace),
                                config, runner, folder, counter) for n in counts}
    at = f"at {side.sha[:12]}" + (f" (input {side.input})" if side.input else "")
    warmed, problem = warm_up(argv, _threads, runner, folder, config, at)  # counts are sorted: 1 comes first
    if problem is not None:
        return problem
    points_must_differ(argv, warmed, config)
    side.output = normalised(warmed[1].stdout, config.run)
    side.sweep = {n: [] for n in counts}
    side.language, side.c = side.sweep[1], side.sweep[claimed]
    target = claimed * config.verify.par_efficiency

    def keep(n: int, value: float, run: dict) -> None:
        side.sweep[n].append(value)
        for which, count in (("language", 1), ("c", claimed)):
            if n == count:
                side.runs[which].append(run)

    def decide():
        step, interval = plan.next_step(side.language, side.c, target, decide_at_least)
        return plausible_step(step, interval or side.interval, claimed, len(side.c), plan.maximum), interval

    failed = timed_rounds(side, list(counts), lambda n: (argv[n], folder, f"a timed run of {_threads(n)}"), keep,
                          decide, config=config, runner=runner, counter=counter, plan=plan, progress=progress, at=at)
    if failed is None and above_ideal(side.interval, claimed):
        side.decision = IMPLAUSIBLE  # out of time with an interval past the ideal: no clean verdict either way
    return failed
