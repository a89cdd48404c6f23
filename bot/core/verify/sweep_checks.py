"""Before a sweep decides anything: can its command vary what it varies, do its points differ, and is the speedup
it measured one a program can have.

A PAR sweep runs the same program at several thread counts and reads the speedup of one over the other. When
`[run] language` has no `{threads}`, every count runs the same command and the "speedup" is noise around 1: that
is a configuration error, never a verdict. The same holds when the runtime prints the thread count it used
(a `[run] metrics` count named threads, workers, tomes or cores) and prints the same one at every count.

A speedup above the ideal (N on N threads) cannot come from the program; an interval that reaches past it says
the host or the measure is noisy. Such a side samples to the end of its budget and is then `implausible`.
"""
from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from bot.core.config import PerfbotFile
from bot.core.reports.records import PerfIssue
from bot.core.verify.interval import Interval
from bot.core.verify.sweep_result import ScalingPoint

THREADS = "{threads}"
IMPLAUSIBLE = "implausible"  # a side's decision, and a run's verdict (verdict_words.IMPLAUSIBLE tells it)
_COUNT_NAME = re.compile(r"(?i)thread|worker|tome|core")
_SLACK = 1e-9  # a speedup of exactly N (a span counted at N threads) is ideal, not above it


def takes_threads(template: Sequence[str] | None) -> bool:
    return any(THREADS in arg for arg in template or ())


def knob_problem(record: PerfIssue, config: PerfbotFile, language_at: str = "[run] language") -> str | None:
    """Why a PAR or GPU report's sweep could vary nothing (its command takes no thread count); None when it can,
    or when it sweeps nothing. `language_at` names the key, with its line when the caller knows the file."""
    if record.track != "par" or takes_threads(config.run.language):
        return None
    gpu = record.backend in ("metal", "cuda") and config.gpu.run is not None
    if gpu and not config.gpu.against_best_cpu:
        return None  # the GPU against one CPU thread: no CPU count is swept
    if not gpu and (record.threads or 1) <= 1 and not config.verify.threads:
        return None
    swept = ("the CPU at several thread counts, the best of which the GPU must beat" if gpu else
             f"the program on 1 thread against {record.threads or 1} threads")
    shown = ", ".join(f'"{arg}"' for arg in config.run.language or ())
    return (f"{record.slug} is a {'GPU' if gpu else 'PAR'} report: perfbot measures {swept}, but {language_at} = "
            f"[{shown}] has no {THREADS}, so every count would run the same command and any speedup would be "
            f"noise. Add {THREADS} where the runtime takes its thread count, e.g. "
            f'["./runtime", "-T{THREADS}", "{{file}}"]')


def same_points(argv: Mapping[int, Sequence[str]], printed: Mapping[int, Mapping[str, float]],
                language_at: str = "[run] language") -> str | None:
    """Why a sweep's thread counts are not different runs: the same argument list at every count, or the
    same thread count printed by the runtime at every count. None when the points differ."""
    counts = sorted(argv)
    if len(counts) < 2:
        return None
    if len({tuple(argv[n]) for n in counts}) == 1:
        return (f"every thread count of the sweep ({', '.join(map(str, counts))}) runs the same command "
                f"({' '.join(argv[counts[0]])}): {language_at} must pass {THREADS} to the runtime")
    names = {name for n in counts for name in printed.get(n, {}) if _COUNT_NAME.search(name)}
    for name in sorted(names):
        values = {n: printed.get(n, {}).get(name) for n in counts}
        if None in values.values():
            continue
        if len(set(values.values())) == 1:
            return (f"the runtime printed {name} {values[counts[0]]:g} at every thread count of the sweep "
                    f"({', '.join(map(str, counts))}): it does not take the count {language_at} passes it "
                    f"({THREADS}); check the flag the runtime reads")
        same = _repeated(values)
        if same:  # a runtime that clamps the count (to its cores, a maximum): two points are one run
            shown = " and ".join(map(str, same))
            return (f"the runtime printed {name} {values[same[0]]:g} at thread counts {shown} of the sweep: "
                    f"those points run the same count, so their speedups are one measurement; name counts it "
                    f"runs in [verify] threads, or check how the runtime reads {THREADS}")
    return None


def _repeated(values: Mapping[int, float | None]) -> list[int]:
    """The first group of asked counts for which the runtime printed one and the same count."""
    seen: dict[float | None, list[int]] = {}
    for n, value in values.items():
        seen.setdefault(value, []).append(n)
    return next((group for group in seen.values() if len(group) > 1), [])


def above_ideal(interval: Interval | None, threads: int) -> bool:
    """The speedup interval of N threads reaches past N."""
    return interval is not None and threads >= 1 and interval.high > threads * (1 + _SLACK)


def plausible_step(step: str, interval: Interval | None, threads: int, taken: int, most: int) -> str:
    """The plan's next step, unless the interval reaches past the ideal: then sample on to the budget's end,
    and call it implausible there, whatever the interval decided."""
    if not above_ideal(interval, threads):
        return step
    return "sample" if taken < most else IMPLAUSIBLE


def implausible_text(interval: Interval, threads: int) -> str:
    return (f"implausible: above ideal, noisy or mismeasured (the speedup on {threads} thread"
            f"{'s' if threads != 1 else ''} reaches {interval.high:.2f}x, past the ideal {threads}x)")


def above_ideal_counts(points: Sequence[ScalingPoint]) -> list[str]:
    """'4.60x at 4' for every swept count whose speedup point is above its ideal: said, never clipped."""
    return [f"{p.speedup.point:.2f}x at {p.threads}" for p in points if p.speedup.point > p.threads * (1 + _SLACK)]
