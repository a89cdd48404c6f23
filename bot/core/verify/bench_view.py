"""What a bench run looks like to people: the before/after table, a mermaid chart, a status line, decided
from the run's stored result without I/O. Untrusted text (program output, errors) only ever lands in fences."""
from __future__ import annotations

import re
import statistics
from dataclasses import dataclass
from typing import TYPE_CHECKING

from bot.core.verify import verdict_words as words
from bot.core.verify.claim_size import number
from bot.core.verify.gain import gain_text
from bot.core.verify.run_parts import RunProgress, RunResult, SideResult
from bot.core.verify.units import result_unit

if TYPE_CHECKING:
    from bot.core.verify.bench_run import BenchRun


@dataclass(frozen=True)
class SideRow:
    side: str
    sha: str
    first: float | None  # median in the run's measure (core/verify/units.py): the language (seq) or one thread (par)
    second: float | None  # the same of C (seq) or N threads (par)
    low: float | None
    point: float | None
    high: float | None
    samples: int
    decision: str
    metrics: str = ""  # the runtime's own counters, median per program: "ITRS 1,245,802 vs 3,110"

    @property
    def ratio_text(self) -> str:
        """'2.41x [1.80, 3.11]', rounded as every figure is (claim_size.number); '–' before a ratio."""
        if self.point is None or self.low is None or self.high is None:
            return "–"
        return f"{number(self.point)}x [{number(self.low)}, {number(self.high)}]"


def side_rows(result: RunResult, purpose: str = "fix") -> list[SideRow]:
    """`decision`: each side's answer (the base of a fix measures the claim, the head the fix)."""
    rows = []
    for side in result.sides:
        interval = side.interval
        rows.append(SideRow(side_label(side), side.sha, statistics.median(side.first) if side.first else None,
                            statistics.median(side.second) if side.second else None,
                            interval.low if interval else None, interval.point if interval else None,
                            interval.high if interval else None, side.samples,
                            words.text(words.of_side(purpose, side.side, side.decision or None, side.against,
                                                     side.factor), ""),
                            _metrics_cell(side)))
    return rows


def side_label(side: SideResult) -> str:
    """'head', or 'head (input 2)' when a report measures several inputs: two rows never both read 'head'."""
    shown = side.input or ""
    return f"{side.side} ({shown[:40]})" if shown else side.side


def _metrics_cell(side: SideResult) -> str:
    """`[run] metrics` beside the times: a deterministic count is the least noisy signal a runtime gives."""
    first, second = side.language_metrics, side.c_metrics
    names = sorted({*first, *second})
    shown = [f"{name} {count_text(first.get(name))} vs {count_text(second.get(name))}" for name in names]
    return code_span("; ".join(shown)) if shown else ""


def count_text(value: object) -> str:
    if not isinstance(value, (int, float)):
        return "-"
    return f"{int(value):,}" if float(value).is_integer() else f"{value:.6g}"


def column_names(result: RunResult, threads: int | None) -> tuple[str, str, str]:
    unit = f"median {result_unit(result).column}"
    if result.par:
        many = f"{threads} thread{'' if threads == 1 else 's'}" if threads else "N threads"
        return f"1 thread ({unit})", f"{many} ({unit})", "speedup [95% interval]"
    against = result.sides[0].against if result.sides else "C"
    if against != "C":  # a `reference:` report: one program run by this revision and by the reference
        name = against.split(" (")[0]
        return f"this revision ({unit})", f"{name} ({unit})", f"this revision/{name} [95% interval]"
    return f"language ({unit})", f"C ({unit})", "language/C [95% interval]"


def mermaid_chart(slug: str, result: RunResult, threads: int | None) -> str:
    """A bar chart GitHub renders (mermaid xychart): the median of each program on each side, in its unit."""
    rows = [r for r in side_rows(result) if r.first is not None and r.second is not None]
    if not rows:
        return ""
    first, second, _ = column_names(result, threads)
    labels: list[str] = []
    values: list[float] = []
    for row in rows:
        if row.first is None or row.second is None:  # kept out above; says so to the type checker
            continue
        labels += [f"{row.side} {first.split(' (')[0]}", f"{row.side} {second.split(' (')[0]}"]
        values += [row.first, row.second]
    unit = result_unit(result)
    number = "{:.0f}".format if unit.counted else "{:.4g}".format  # mermaid reads 1234567, never 1.235e+06
    quoted = ", ".join(f'"{label}"' for label in labels)
    bars = ", ".join(number(v) for v in values)
    top = max(values) * 1.15
    return (f'```mermaid\nxychart-beta\n    title "{slug}: median {unit.axis}"\n    x-axis [{quoted}]\n'
            f'    y-axis "{unit.axis}" 0 --> {number(top)}\n    bar [{bars}]\n```')


def progress_line(slug: str, progress: RunProgress, host: str) -> str:
    """'verifying perf_x: head 12/30 samples on mini-2' while a run goes on."""
    side, taken, most = progress.side, progress.taken, progress.most
    where = f" on {host}" if host else ""
    if not side:
        return f"verifying {slug}: building{where}"
    return f"verifying {slug}: {side} {taken}/{most} samples{where}"


def status_description(run: BenchRun) -> str:
    """At most 140 characters, as GitHub's commit status allows."""
    if not run.done:
        return progress_line(run.slug, run.progress, run.host)[:140]
    rows = [r for r in side_rows(run.result) if r.point is not None]
    ratio = f" {rows[-1].ratio_text}" if rows else ""
    told = words.of_run(run)
    note = f"; {told.note}" if told and told.note else ""  # the claim off in size, measured where it was made
    gain = f"; {gain_line(run.result)}" if run.result.gain else ""
    return f"{words.text(told, run.verdict or '')}{ratio}{gain}{note}"[:140]


def gain_line(result: RunResult) -> str:
    """'program 1.46x faster [1.31, 1.62]' base to head, and whether the fix was already in the base."""
    text = f"program {gain_text(result.gain)}" if result.gain else ""
    return ("already in base: " + text) if result.already_in_base else text


def status_state(run: BenchRun) -> str:
    told = words.of_run(run)
    return "pending" if not run.done else told.status_state if told else "error"


def verdict_icon(run: BenchRun) -> str:
    told = words.of_run(run)
    return told.icon if told else ""


def code_span(text: str) -> str:
    """Untrusted text as inline code: delimited by more backticks than it holds, on one line."""
    text = " ".join(text.split())
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    ticks = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{ticks}{pad}{text}{pad}{ticks}"
