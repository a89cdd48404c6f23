"""The project's own benchmark suite: its output parsed strictly, base and head compared benchmark by benchmark.

    parse_suite_output(text, fmt) -> dict[str, float]     one run's output; fmt is `[suite] format`

Output forms, one run of the suite each, times in seconds:

    json   either an object  {"fib 30": 0.412, "sort 1e6": 1.03}
           or a list         [{"name": "fib 30", "seconds": 0.412}, {"name": "sort 1e6", "seconds": 1.03}]
    tsv    one `name<TAB>seconds` line per benchmark; blank lines and lines starting with `#` are skipped

Names are unique within one output, times finite and above 0; the suite's stdout holds nothing else (run
make with -s so it does not echo its commands). Anything else raises SuiteOutputError naming the line.

    compare_suites(base, head, tolerance) -> SuiteResult

`base` and `head` map each benchmark to its times, one per run. Each benchmark gets the interval of
median(head) / median(base) (above 1: head is slower): `regression` when all of it is above 1 + tolerance,
`ok` when all of it is at or under, else `inconclusive`. The suite fails on any regression and passes
when every benchmark is ok and none was removed by head; otherwise it is inconclusive. The intervals hold
at 95% for the suite as a whole (Bonferroni over its benchmarks), not 95% each.
"""
from __future__ import annotations

import json
import math
from dataclasses import dataclass

from bot.core.verify.stats import CONFIDENCE, FAIL, INCONCLUSIVE, PASS, Interval, decide_at_most, ratio_interval

OK, REGRESSION = "ok", "regression"
FORMATS = ("json", "tsv")
_ONLY = "only the results belong on the suite's stdout"
_EXPECTED = {
    "json": 'expected {"name": seconds, ...} or [{"name": "...", "seconds": ...}, ...]',
    "tsv": "expected one `name<TAB>seconds` line per benchmark (# starts a comment)",
}


class SuiteOutputError(ValueError):
    """The suite printed something that is not its declared format: where, what, and the expected form."""

    def __init__(self, fmt: str, line: int | None, problem: str) -> None:
        where = f"line {line}: " if line is not None else ""
        super().__init__(f"{where}{problem}; {_EXPECTED[fmt]}")
        self.line, self.problem = line, problem


def parse_suite_output(text: str, fmt: str) -> dict[str, float]:
    """One run's times by benchmark name, in the order printed."""
    if fmt not in FORMATS:
        raise ValueError(f"unknown suite format {fmt!r}; use one of {', '.join(FORMATS)}")
    times = _parse_json(text) if fmt == "json" else _parse_tsv(text)
    if not times:
        raise SuiteOutputError(fmt, None, "the output names no benchmark")
    return times


class _Duplicate(Exception):
    pass


def _unique(pairs: list) -> dict:
    # json.loads would silently keep the last of two equal keys; a benchmark printed twice is a suite bug.
    seen = set()
    for key, _ in pairs:
        if key in seen:
            raise _Duplicate(key)
        seen.add(key)
    return dict(pairs)


def _parse_json(text: str) -> dict[str, float]:
    try:
        data = json.loads(text, object_pairs_hook=_unique)
    except json.JSONDecodeError as exc:
        problem = f"not JSON ({exc.msg}) near {_near(text, exc.pos)!r}; {_ONLY}"
        raise SuiteOutputError("json", exc.lineno, problem) from None
    except _Duplicate as exc:
        name = exc.args[0]
        raise SuiteOutputError("json", _key_line(text, name, 2), f"benchmark {name!r} is listed twice") from None
    if isinstance(data, dict):
        entries = [(name, seconds, _key_line(text, name)) for name, seconds in data.items()]
    elif isinstance(data, list):
        entries = []
        for number, entry in enumerate(data, 1):
            name = entry.get("name") if isinstance(entry, dict) else None
            line = _key_line(text, name) if isinstance(name, str) else None
            if not isinstance(name, str) or set(entry) != {"name", "seconds"}:
                raise SuiteOutputError("json", line, f"entry {number} is {json.dumps(entry)[:80]}")
            entries.append((name, entry["seconds"], line))
    else:
        raise SuiteOutputError("json", 1, f"the output is a JSON {type(data).__name__}")
    times: dict[str, float] = {}
    for name, seconds, line in entries:
        if name in times:
            raise SuiteOutputError("json", _key_line(text, name, 2), f"benchmark {name!r} is listed twice")
        times[_name(name, "json", line)] = _seconds(seconds, name, "json", line)
    return times


def _parse_tsv(text: str) -> dict[str, float]:
    times: dict[str, float] = {}
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.rstrip()
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        fields = line.split("\t")
        if len(fields) != 2:
            count = "no tab" if len(fields) == 1 else f"{len(fields) - 1} tabs"
            raise SuiteOutputError("tsv", number, f"{line[:80]!r} has {count}; {_ONLY}")
        name = _name(fields[0], "tsv", number)
        try:
            seconds = float(fields[1])
        except ValueError:
            raise SuiteOutputError("tsv", number, f"{fields[1][:40]!r} is not a number of seconds") from None
        if name in times:
            raise SuiteOutputError("tsv", number, f"benchmark {name!r} is listed twice")
        times[name] = _seconds(seconds, name, "tsv", number)
    return times


def _name(name: str, fmt: str, line: int | None) -> str:
    if not name or name != name.strip():
        raise SuiteOutputError(fmt, line, f"benchmark name {name!r} is empty or has spaces around it")
    return name


def _seconds(value: object, name: str, fmt: str, line: int | None) -> float:
    # bool is an int to Python, and json.loads accepts NaN and Infinity: none of them is a time.
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value <= 0:
        raise SuiteOutputError(fmt, line, f"benchmark {name!r}: {json.dumps(value)[:40]} is not a time above 0 seconds")
    return float(value)


def _key_line(text: str, name: str, occurrence: int = 1) -> int | None:
    """The line where a name appears (as JSON writes it) for the `occurrence`th time."""
    needle, at = json.dumps(name, ensure_ascii=False), -1
    for _ in range(occurrence):
        at = text.find(needle, at + 1)
        if at < 0:
            return None
    return text.count("\n", 0, at) + 1


def _near(text: str, pos: int) -> str:
    return text[max(0, pos - 10):pos + 20]


@dataclass(frozen=True)
class Benchmark:
    """One benchmark on both sides: `interval` is head time / base time (above 1: head is slower)."""

    name: str
    base_seconds: tuple[float, ...]
    head_seconds: tuple[float, ...]
    interval: Interval
    decision: str  # ok | regression | inconclusive

    def as_dict(self) -> dict:
        return {"name": self.name, "base_seconds": list(self.base_seconds), "head_seconds": list(self.head_seconds),
                "head_over_base": self.interval.as_dict(), "decision": self.decision}


@dataclass(frozen=True)
class SuiteResult:
    verdict: str  # pass | fail | inconclusive
    tolerance: float
    benchmarks: tuple[Benchmark, ...]
    only_base: tuple[str, ...] = ()  # removed by head: a removed benchmark could hide a regression
    only_head: tuple[str, ...] = ()  # new in head: nothing to compare against

    @property
    def regressions(self) -> tuple[Benchmark, ...]:
        return tuple(b for b in self.benchmarks if b.decision == REGRESSION)

    def summary(self) -> str:
        counts = {d: sum(b.decision == d for b in self.benchmarks) for d in (OK, REGRESSION, INCONCLUSIVE)}
        parts = [f"suite {self.verdict}: {counts[OK]} ok, {counts[REGRESSION]} regressed, "
                 f"{counts[INCONCLUSIVE]} inconclusive at {self.tolerance:.0%} tolerance"]
        parts += [f"{b.name} {b.interval.point:.2f}x [{b.interval.low:.2f}, {b.interval.high:.2f}]"
                  for b in self.regressions]
        if self.only_base:
            parts.append("missing in head: " + ", ".join(self.only_base))
        if self.only_head:
            parts.append("new in head: " + ", ".join(self.only_head))
        return "; ".join(parts)

    def as_dict(self) -> dict:
        return {"verdict": self.verdict, "tolerance": self.tolerance, "summary": self.summary(),
                "benchmarks": [b.as_dict() for b in self.benchmarks], "only_base": list(self.only_base),
                "only_head": list(self.only_head)}


def compare_suites(base: dict[str, list[float]], head: dict[str, list[float]], tolerance: float) -> SuiteResult:
    """Each benchmark both sides ran, decided against 1 + tolerance; see the module docstring for the rules."""
    common = [name for name in base if name in head]
    # Bonferroni: a suite of many benchmarks each judged at 95% would flag a regression somewhere by chance;
    # splitting the error over the benchmarks keeps the suite's verdict at 95%.
    confidence = 1 - (1 - CONFIDENCE) / max(1, len(common))
    benchmarks = []
    for name in common:
        interval = ratio_interval(head[name], base[name], confidence=confidence)
        decided = decide_at_most(interval, 1 + tolerance)
        decision = OK if decided == PASS else REGRESSION if decided == FAIL else INCONCLUSIVE
        benchmarks.append(Benchmark(name, tuple(base[name]), tuple(head[name]), interval, decision))
    only_base = tuple(name for name in base if name not in head)
    only_head = tuple(name for name in head if name not in base)
    if any(b.decision == REGRESSION for b in benchmarks):
        verdict = FAIL
    elif benchmarks and all(b.decision == OK for b in benchmarks) and not only_base:
        verdict = PASS
    else:
        verdict = INCONCLUSIVE
    return SuiteResult(verdict, tolerance, tuple(benchmarks), only_base, only_head)
