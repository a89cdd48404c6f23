"""The ratio a measurements table gives, how it was derived, and every ratio a stated one may fairly match."""
from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass

from bot.core.reports.records import Measurement
from bot.core.reports.tables import threads_in

_THREAD_WORDS = re.compile(r"(?i)(?<![\w.-])-{0,2}t\s?=?\s?\d+\b|\b\d+\s*(?:threads?|tomes?|cores?|t)\b|"
                           r"threads?\s*[=:]\s*\d+")


@dataclass(frozen=True)
class TableRatio:
    """A table's ratio: the value, the thread count it is about, where it came from and what it means."""

    ratio: float | None = None
    threads: int | None = None
    evidence: str = ""  # "T1 0.214 s / T8 0.056 s = 3.8x speedup; ratio 8 / 3.8"
    meaning: str = ""  # set when the ratio is not the plain definition (a GPU against one CPU thread)
    candidates: tuple[float, ...] = ()  # ratios of every comparable pair of rows (several builds, thread counts)
    gap: str = ""  # why there is no ratio, in the reader's terms
    kind: str = ""  # "gpu" for a GPU claim (target / achieved), "reference" against another revision
    unsure: str = ""  # set when it cannot tell which row a stated ratio comes from: the rows it considered


def significant(value: float) -> float | None:
    """Three significant digits, as people write ratios; None for what no measurement gives (0, inf, nan)."""
    if not math.isfinite(value) or value <= 0:
        return None
    rounded = float(f"{value:.3g}")
    return rounded if math.isfinite(rounded) and rounded > 0 else None


def table_ratio(rows: tuple[Measurement, ...], track: str | None, threads: int | None,
                backend: str | None = None) -> TableRatio:
    """seq: best language time / best C time; par: N / speedup(N), within a backend, or a GPU against a CPU."""
    if track in ("seq", None):
        seq = _seq(rows)
        if seq.ratio is not None or track == "seq":
            return seq
    return _par(rows, threads, backend)


def reference_ratio(rows: tuple[Measurement, ...], reference: str) -> TableRatio:
    """head time / reference time, the reference rows being those that name the reference's revision."""
    name, _, revision = reference.partition("@")
    wanted = [w.lower() for w in (revision, name if not revision else "") if w]
    timed = [r for r in rows if r.seconds and r.impl != "c"]
    ref = [r for r in timed if any(w in r.label.lower() for w in wanted) or "reference" in r.label.lower()]
    head = [r for r in timed if r not in ref]
    if not ref or not head:
        return TableRatio(kind="reference", gap=f"no table row names the reference `{reference}` (label it "
                                                f"with `{revision or name}`) beside a row timing this revision (HEAD)")
    new, old = min(head, key=lambda r: r.time), min(ref, key=lambda r: r.time)
    candidates = tuple(v for a in head for b in ref if (v := significant(a.time / b.time)) is not None)
    evidence = (f"'{new.label}' {secs(new.time)} / reference '{old.label}' {secs(old.time)} "
                f"(lines {new.line} and {old.line})")
    return TableRatio(significant(new.time / old.time), None, evidence, kind="reference", candidates=candidates)


def _seq(rows: tuple[Measurement, ...]) -> TableRatio:
    language = [r for r in rows if r.impl == "language" and r.seconds is not None and (r.threads or 1) == 1]
    c = [r for r in rows if r.impl == "c" and r.seconds and (r.threads or 1) == 1]
    if not language or not c:
        return TableRatio(gap=_seq_gap(rows))
    fastest, fastest_c = min(language, key=lambda r: r.time), min(c, key=lambda r: r.time)
    ratio = significant(fastest.time / fastest_c.time) if fastest.time > 0 else None
    candidates = tuple(v for a in language for b in c if (v := significant(a.time / b.time)) is not None)
    evidence = (f"'{fastest.label}' {secs(fastest.time)} / '{fastest_c.label}' {secs(fastest_c.time)}"
                f" (lines {fastest.line} and {fastest_c.line})")
    return TableRatio(ratio, None, evidence, candidates=candidates)


def _seq_gap(rows: tuple[Measurement, ...]) -> str:
    timed = [r for r in rows if r.seconds is not None]
    if not timed:
        return "the table has no readable times"
    if not any(r.impl == "language" for r in timed):
        return "no table row names the language (bend/hvm) with a time"
    return "no table row is C (label `C`, `gcc` or `clang`) with a one-thread time"


def _par(rows: tuple[Measurement, ...], threads: int | None, backend: str | None) -> TableRatio:
    runs = [r for r in rows if r.impl in ("language", "") and r.threads and (r.seconds is not None or r.speedup)]
    if not any(r.impl == "language" for r in runs):
        runs = [r for r in runs if r.impl == ""]  # unlabelled rows of a par table are the language's own
    else:
        runs = [r for r in runs if r.impl == "language"]
    gpu = [r for r in rows if r.impl == "language" and r.backend in ("metal", "cuda") and r.seconds]
    cpu = [r for r in runs if r.backend not in ("metal", "cuda")]
    wants_gpu = backend in ("metal", "cuda") or (backend is None and gpu and not _scales(cpu))
    if wants_gpu and gpu and not _scales([r for r in runs if r.backend in ("metal", "cuda")]):
        return _gpu_against_cpu(gpu, [r for r in rows if r.seconds and r.backend not in ("metal", "cuda")
                                      and r.impl in ("language", "")])
    pool = [r for r in runs if r.backend in ("metal", "cuda")] if wants_gpu and gpu else cpu
    return _scaling(pool or runs, threads)


def _scales(runs: list[Measurement]) -> bool:
    counts = {r.threads for r in runs if r.seconds is not None}
    return 1 in counts and len(counts) >= 2


def _scaling(runs: list[Measurement], threads: int | None) -> TableRatio:
    best: dict[int, Measurement] = {}
    for run in runs:
        if run.seconds is not None and run.threads is not None and (run.threads not in best
                                                                     or run.time < best[run.threads].time):
            best[run.threads] = run
    counts = sorted(n for n in best if n > 1)
    if 1 in best and best[1].seconds and counts:
        n = threads if threads is not None and threads in best and threads > 1 else counts[-1]
        unsure = ""
        if threads and threads > 1 and threads not in best:
            unsure = (f"the claim is about T{threads}, which the table does not time; rows considered: "
                      + ", ".join(f"T{m} (line {best[m].line}, ratio {m / (best[1].time / best[m].time):.3g})"
                                  for m in counts if best[m].time))
        if best[n].time <= 0:
            return TableRatio(threads=n, gap=f"the {n}-thread time is 0")
        speedup = best[1].time / best[n].time
        evidence = (f"T1 {secs(best[1].time)} / T{n} {secs(best[n].time)} = {speedup:.3g}x speedup; "
                    f"ratio {n} / {speedup:.3g} (lines {best[1].line} and {best[n].line})")
        return TableRatio(significant(n / speedup), n, evidence, candidates=_scaling_candidates(runs, threads),
                          unsure=unsure)
    stated = {r.threads: (r.speedup, r.line) for r in runs if r.speedup and r.threads and r.threads > 1}
    if stated:
        n = threads if threads is not None and threads in stated else max(stated)
        speedup, line = stated[n]
        return TableRatio(significant(n / speedup), n,
                          f"speedup {speedup:g}x at T{n} (line {line}); ratio {n} / {speedup:g}",
                          candidates=tuple(v for m, (s, _) in stated.items()
                                           if threads in (None, m) and (v := significant(m / s))))
    largest = max(counts, default=None)
    return TableRatio(threads=largest, gap="the table has no 1-thread and N-thread times of the language "
                                           "to compute the speedup")


def _scaling_candidates(runs: list[Measurement], claimed: int | None) -> tuple[float, ...]:
    """N / speedup for every build (rows grouped by their label without thread words), at the claimed thread
    count when one is stated, else at every count: a claim about T16 is not borne out by T8's ratio."""
    groups: dict[str, dict[int, float]] = {}
    for run in runs:
        if run.seconds and run.threads is not None:
            group = groups.setdefault(" ".join(_THREAD_WORDS.sub(" ", run.label).lower().split()), {})
            group[run.threads] = min(run.seconds, group.get(run.threads, run.seconds))
    values = []
    for times in groups.values():
        for n, seconds in times.items():
            if n > 1 and times.get(1) and claimed in (None, n):
                values.append(significant(n / (times[1] / seconds)))
        for n, seconds in times.items():  # a row's speedup against the fastest one-thread time of any build
            one = min((t[1] for t in groups.values() if t.get(1)), default=None)
            if n > 1 and one and claimed in (None, n):
                values.append(significant(n / (one / seconds)))
    return tuple(v for v in values if v is not None)


def _gpu_against_cpu(gpu: list[Measurement], cpu: list[Measurement]) -> TableRatio:
    """A GPU row with no GPU scaling to compare: its speedup is against the CPU runs beside it."""
    run = min(gpu, key=lambda r: r.time)
    name = "Metal" if run.backend == "metal" else "CUDA"
    one = [r for r in cpu if (r.threads or threads_in(r.label) or 1) == 1]
    if not one:
        return TableRatio(gap=f"the {name} row has no one-thread CPU row to compare with (add the -T1 CPU time)")
    base = min(one, key=lambda r: r.time)
    speedup = base.time / run.time
    if speedup < 1:
        return TableRatio(significant(1 / speedup), 1,
                          f"'{run.label}' {secs(run.time)} / one CPU thread '{base.label}' {secs(base.time)} "
                          f"(lines {run.line} and {base.line})",
                          meaning=f"{name} is slower than one CPU thread: the ratio is the GPU's time over one CPU "
                                  f"thread's (ideal taken as 1, the least a GPU must reach)",
                          candidates=(significant(1 / speedup) or 0.0,))
    best_cpu = min(cpu, key=lambda r: r.time)
    if best_cpu.time < run.time:
        ratio = significant(run.time / best_cpu.time)
        return TableRatio(ratio, best_cpu.threads or 1,
                          f"'{run.label}' {secs(run.time)} / best CPU '{best_cpu.label}' "
                          f"{secs(best_cpu.time)} (lines {run.line} and {best_cpu.line})",
                          meaning=f"{name} loses to the best CPU run: the ratio is the GPU's time over it",
                          candidates=(ratio or 0.0,))
    return TableRatio(gap=f"the {name} row beats every CPU row and nothing says what it should reach: state the "
                          f"expected speedup (\"the profile suggests about 24x over one CPU thread\") or add a "
                          f"patched {name} row")


def secs(seconds: float) -> str:
    if seconds >= 1:
        return f"{seconds:.3g} s"
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.3g} ms"
    return f"{seconds * 1e6:.3g} µs"


@dataclass(frozen=True)
class RowPair:
    """A ratio two table rows give in one measure: what a stated ratio is checked against before it is called
    a mismatch, and what the message names when none is close."""

    value: float
    text: str  # "'bend · 400 dropped fields' / 'C (gcc -O2)' in time = 29.7x (lines 12 and 14)"
    measure: str = "time"  # the column's header: time, instructions, user, itrs ...


def _measures(row: Measurement) -> dict[str, float]:
    values = dict(row.counts)
    if row.seconds:
        values["time"] = row.seconds
    return values


# (row over, row under, its figure, theirs) -> the ratio the claim states; plain division when absent
Ratio = Callable[[Measurement, Measurement, float, float], float]


def _pairs(top: list[Measurement], bottom: list[Measurement], how: Ratio | None = None) -> list[RowPair]:
    out = []
    for a in top:
        for b in bottom:
            theirs = _measures(b)
            for measure, mine in _measures(a).items():
                if a is b or measure not in theirs or not theirs[measure]:
                    continue
                value = significant(how(a, b, mine, theirs[measure]) if how else mine / theirs[measure])
                if value is not None:
                    out.append(RowPair(value, f"'{a.label}' / '{b.label}' in {measure} = {value:g}x "
                                              f"(lines {a.line} and {b.line})", measure))
    return out


def every_pair(rows: tuple[Measurement, ...], track: str | None, reference: str | None = None,
               threads: int | None = None) -> list[RowPair]:
    """Every ratio the table's rows give in every measure it has (time, instructions, user time, a runtime's
    count): each language row (an input size, a variant) over each C row, this revision over the reference,
    or a build's one-thread run over its N-thread run (as N / speedup), at the claimed count when there is one."""
    if reference:
        name, _, revision = reference.partition("@")
        wanted = [w.lower() for w in (revision, name if not revision else "") if w]
        runs = [r for r in rows if r.impl != "c" and _measures(r)]
        ref = [r for r in runs if any(w in r.label.lower() for w in wanted) or "reference" in r.label.lower()]
        return _pairs([r for r in runs if r not in ref], ref)
    if track == "par":
        groups: dict[str, list[Measurement]] = {}
        for run in rows:
            if run.threads:
                groups.setdefault(" ".join(_THREAD_WORDS.sub(" ", run.label).lower().split()), []).append(run)
        out = []
        for runs in groups.values():
            ones = [r for r in runs if r.threads == 1]
            more = [r for r in runs if (r.threads or 1) > 1 and threads in (None, r.threads)]
            out += _pairs(ones, more, lambda a, b, mine, theirs: (b.threads or 1) / (mine / theirs))
        return out
    c = [r for r in rows if r.impl == "c" and (r.threads or 1) == 1]
    return _pairs([r for r in rows if r.impl != "c" and (r.threads or 1) == 1], c)


_MEASURE_WORDS = {"instructions": ("instr", "insn"), "user": ("user", "cpu")}


def in_measure(pairs: list[RowPair], measure: str | None) -> list[RowPair]:
    """The pairs in the column of the measure a report names (`measure: instructions`, `user`, `metric:itrs`);
    [] when it names none, or wall time, or the table has no such column."""
    if not measure or measure == "wall":
        return []
    words = _MEASURE_WORDS.get(measure, (measure.removeprefix("metric:").lower(),))
    return [p for p in pairs if p.measure != "time" and any(w in p.measure for w in words)]


def closest(stated: float, pairs: list[RowPair]) -> RowPair | None:
    return min(pairs, key=lambda p: abs(stated - p.value) / p.value, default=None)
