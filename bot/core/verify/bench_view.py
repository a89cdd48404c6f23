"""What a bench run looks like to people: the before/after table, a mermaid chart, a status line, decided
from the run's stored result without I/O. Untrusted text (program output, errors) only ever lands in fences."""
from __future__ import annotations

import re
import statistics
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from bot.core.verify import verdict_words as words
from bot.core.verify.claim_size import number
from bot.core.verify.gain import gain_text
from bot.core.verify.stats import Interval
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


def side_rows(result: Mapping[str, Any], purpose: str = "fix") -> list[SideRow]:
    """`decision`: each side's answer (the base of a fix measures the claim, the head the fix)."""
    rows = []
    for side in result.get("sides", []):
        first = side.get("language_seconds", side.get("one_thread_seconds")) or []
        second = side.get("c_seconds", side.get("n_threads_seconds")) or []
        interval = side.get("interval") or {}
        rows.append(SideRow(side_label(side), side["sha"], statistics.median(first) if first else None,
                            statistics.median(second) if second else None, interval.get("low"),
                            interval.get("point"), interval.get("high"), min(len(first), len(second)),
                            words.text(words.of_side(purpose, side["side"], side.get("decision"),
                                                     side.get("against") or "C", side.get("factor")), ""),
                            _metrics_cell(side.get("metrics") or {})))
    return rows


def side_label(side: dict) -> str:
    """'head', or 'head (input 2)' when a report measures several inputs: two rows never both read 'head'."""
    given = side.get("input")
    shown = " ".join(map(str, given)) if isinstance(given, list) else str(given or "")
    return f"{side['side']} ({shown[:40]})" if shown else side["side"]


def _metrics_cell(metrics: dict) -> str:
    """`[run] metrics` beside the times: a deterministic count is the least noisy signal a runtime gives."""
    first, second = metrics.get("language") or {}, metrics.get("c") or {}
    names = sorted({*first, *second})
    shown = [f"{name} {count_text(first.get(name))} vs {count_text(second.get(name))}" for name in names]
    return code_span("; ".join(shown)) if shown else ""


def count_text(value: object) -> str:
    if not isinstance(value, (int, float)):
        return "-"
    return f"{int(value):,}" if float(value).is_integer() else f"{value:.6g}"


def is_par(result: dict) -> bool:
    return any("one_thread_seconds" in side for side in result.get("sides", []))


def column_names(result: dict, threads: int | None) -> tuple[str, str, str]:
    sides = result.get("sides") or [{}]
    unit = f"median {result_unit(result).column}"
    if is_par(result):
        many = f"{threads} thread{'' if threads == 1 else 's'}" if threads else "N threads"
        return f"1 thread ({unit})", f"{many} ({unit})", "speedup [95% interval]"
    against = sides[0].get("against", "C")
    if against != "C":  # a `reference:` report: one program run by this revision and by the reference
        name = against.split(" (")[0]
        return f"this revision ({unit})", f"{name} ({unit})", f"this revision/{name} [95% interval]"
    return f"language ({unit})", f"C ({unit})", "language/C [95% interval]"


def mermaid_chart(slug: str, result: dict, threads: int | None) -> str:
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


def progress_line(slug: str, progress: Mapping[str, Any], host: str) -> str:
    """'verifying perf_x: head 12/30 samples on mini-2' while a run goes on."""
    side, taken, most = progress.get("side", ""), progress.get("taken", 0), progress.get("most", 0)
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
    gain = f"; {gain_line(run.result)}" if run.result.get("gain") else ""
    return f"{words.text(told, run.verdict or '')}{ratio}{gain}{note}"[:140]


def gain_line(result: Mapping[str, Any]) -> str:
    """'program 1.46x faster [1.31, 1.62]' base to head, and whether the fix was already in the base."""
    gain = result.get("gain")
    text = f"program {gain_text(Interval(**gain))}" if gain else ""
    return ("already in base: " + text) if result.get("already_in_base") else text


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
