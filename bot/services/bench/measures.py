"""What a sample is made of (`[verify] measure`, or a report's `measure:`): wall time, user CPU time, instructions
counted on the host, or a count the runtime prints itself (metric:NAME of [run] metrics)."""
from __future__ import annotations

import time

from bot.adapters.runners.base import RunResult
from bot.core.config import PerfbotFile
from bot.core.verify.counters import counted, instructions
from bot.core.verify.outputs import metrics_of
from bot.core.verify.scaling import round_order
from bot.core.verify.stats import INCONCLUSIVE, ratio_interval
from bot.errors import NotConfigured

MISMATCH, ERROR = "mismatch", "error"  # a verification that measured nothing, and why


def find_counter(runner, cwd) -> str:
    """The instruction counter that really counts on this runner's host: perf stat where hardware counters
    exist, else cachegrind; a refusal that says what each answered when neither does."""
    answers = []
    for name in ("perf", "cachegrind"):
        result = runner.run(counted(name, ["true"]), cwd, 60)
        if result.returncode == 0 and instructions(name, result.stderr):
            return name
        why = result.stderr.strip().splitlines()[-1][:160] if result.stderr.strip() else f"exit {result.returncode}"
        answers.append(f"{'perf stat' if name == 'perf' else 'valgrind --tool=cachegrind'}: {why}")
    raise NotConfigured(f'[verify] measure = "instructions" needs `perf stat` with hardware counters or '
                        f"`valgrind --tool=cachegrind` on {runner.host}, and neither counts there "
                        f"({'; '.join(answers)})",
                        'install valgrind on that host, or use measure = "user" (CPU time) or "wall"',
                        key="verify.measure")


def wrap_for_measure(argv: list[str], config: PerfbotFile, runner, cwd, counter: dict) -> list[str]:
    """`argv` under the counter when the measure is instructions (found once per verification)."""
    if config.measure != "instructions":
        return argv
    if "name" not in counter:
        counter["name"] = find_counter(runner, cwd)
    return counted(counter["name"], argv)


def sample_value(result: RunResult, config: PerfbotFile, counter: dict, runner) -> tuple[float, str | None]:
    """The sample's value in the configured measure, or the reason there is none."""
    measure = config.measure
    if measure == "wall":
        return result.seconds, None
    if measure == "user":
        if result.user is None:
            return 0.0, f"runner {runner.name} cannot report CPU time (no rusage); use measure = \"wall\""
        if result.user <= 0:
            return 0.0, ("a run took no measurable user CPU time (the kernel counts it in scheduler ticks): give "
                         'the program a larger input, or use measure = "wall" or "instructions"')
        return result.user, None
    if measure.startswith("metric:"):
        name = measure.removeprefix("metric:")
        value = metrics_of(result.stdout, result.stderr, config.run).get(name)
        if not value or value <= 0:
            return 0.0, (f"a run printed no {name} count (measure = \"{measure}\"): both sides must print it, so "
                         "against a C translation the translation prints the same count of the same work; else "
                         "measure the runtime against itself (a `reference:` report)")
        return float(value), None
    count = instructions(counter["name"], result.stderr)
    if not count:
        return 0.0, f"{counter['name']} printed no instruction count for a run"
    return float(count), None


def run_record(result: RunResult, config: PerfbotFile, **extra) -> dict:
    """What a bench run keeps of one timed run beside its sample: times, page faults, the runtime's metrics."""
    return {"wall": result.seconds, "user": result.user, "system": result.system, "faults": result.faults,
            "load": result.load, "steal": result.steal, "cores": result.cores,
            "metrics": metrics_of(result.stdout, result.stderr, config.run), **extra}


def settle_round(side, step: str, interval, deadline: float, progress, taken: int, most: int) -> bool:
    """After a round of samples: the interval so far kept, progress told; True once the side is decided, or
    out of time (then inconclusive, with the interval of everything taken)."""
    side.interval = interval or side.interval
    progress(side.label + (f" {side.input}" if side.input else ""), taken, most)
    if step != "sample":
        side.decision = step
        return True
    if time.monotonic() >= deadline:
        side.interval = ratio_interval(side.language, side.c)
        side.decision = INCONCLUSIVE
        return True
    return False


def timed_rounds(side, keys: list, job, keep, decide, *, config: PerfbotFile, runner, counter: dict, plan, progress,
                 at: str, rotate: bool = True) -> tuple[str, str] | None:
    """The sampling loop every verification shares: each round runs every key once (up, then down, unless
    `rotate` is off), `keep(key, value, run)` stores its sample and run record, then `decide()` gives the plan's
    next step and interval, until the side is decided or out of time. (verdict, message) when a run fails.

    `job(key)` -> (argv, cwd, name): what to run for a key, and what to call it in an error."""
    deadline = time.monotonic() + config.verify.budget_seconds
    rounds = 0
    while True:
        for key in (round_order(keys, rounds) if rotate else keys):
            argv, cwd, name = job(key)
            result = runner.run(argv, cwd, config.verify.timeout_seconds)
            if not result.ok:
                return ERROR, result.failure(name, at, config.verify.timeout_seconds, config.verify.memory_mb)
            value, problem = sample_value(result, config, counter, runner)
            if problem is not None:
                return ERROR, f"{problem} {at}"
            keep(key, value, run_record(result, config))
        rounds += 1
        step, interval = decide()
        if settle_round(side, step, interval, deadline, progress, rounds, plan.maximum):
            return None
