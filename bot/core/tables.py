"""The measurements table: find its columns by header synonyms, read times with units, compute the ratio."""
from __future__ import annotations

import math
import re
from dataclasses import dataclass

from bot.core.records import Measurement

_COLUMN_WORDS = {
    "label": {"implementation", "impl", "program", "variant", "version", "language", "lang", "name"},
    "time": {"time", "wall", "seconds", "runtime", "median", "mean", "elapsed", "duration"},
    "threads": {"threads", "thread", "tomes", "tome", "cores", "workers", "t"},
    "machine": {"machine", "host", "hardware"},
    "command": {"command", "cmd"},
}
_SECONDS_PER_UNIT = {
    "ns": 1e-9, "us": 1e-6, "µs": 1e-6, "μs": 1e-6, "ms": 1e-3,
    "s": 1.0, "sec": 1.0, "secs": 1.0, "second": 1.0, "seconds": 1.0, "min": 60.0, "mins": 60.0,
}
_MARKUP = re.compile(r"[*_`~]+")
_HEADER_WORDS = re.compile(r"[a-zµμ]+")
_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")
_COUNT = re.compile(r"(?<!\d)\d{1,6}(?!\d)")  # longer digit runs are no thread count (and int() refuses huge ones)
_UNIT = re.compile(r"(?<![a-zµμ])(ns|us|µs|μs|ms|s|secs?|seconds?|mins?)(?![a-z])", re.IGNORECASE)
_LANGUAGE_ROW = re.compile(r"(?i)\b(?:bend\w*|hvm\w*|language)\b")
_C_ROW = re.compile(r"(?i)^\s*(?:c|c99|c11|c17|cc|gcc|clang)(?![\w+#])|\b(?:gcc|clang)\b")


@dataclass(frozen=True)
class RawTable:
    """A GFM table as written: header cells and body rows with their 1-based file lines."""

    line: int
    header: tuple[str, ...]
    rows: tuple[tuple[int, tuple[str, ...]], ...]


def measurements_of(table: RawTable) -> tuple[Measurement, ...]:
    """The table's rows as measurements; columns found by header synonyms, seconds from header or cell units."""
    columns, header_unit = _columns(table.header)
    rows = []
    for line, cells in table.rows:
        def cell(role: str) -> str:
            index = columns.get(role)
            return _MARKUP.sub("", cells[index]).strip() if index is not None and index < len(cells) else ""

        label = cell("label")
        rows.append(Measurement(
            label=label,
            impl=impl_of(label),
            seconds=seconds_of(cell("time"), header_unit),
            threads=_int_of(cell("threads")),
            machine=cell("machine"),
            command=cells[columns["command"]].strip().strip("`").strip()
            if "command" in columns and columns["command"] < len(cells) else "",
            line=line,
        ))
    return tuple(rows)


def has_time_column(table: RawTable) -> bool:
    return "time" in _columns(table.header)[0]


def impl_of(label: str) -> str:
    """language when the label names the language, c when it names C or a C compiler, else ''."""
    if _LANGUAGE_ROW.search(label):
        return "language"
    if _C_ROW.search(label):
        return "c"
    return ""


def seconds_of(text: str, default_unit: float = 1.0) -> float | None:
    """ "1.2 s", "850 ms", "12µs", "0,9s", "1,234 ms" -> seconds; a bare number is in `default_unit`."""
    match = _NUMBER.search(text)
    if match is None:
        return None
    digits = match.group(0)
    if "," in digits:
        thousands = "." in digits or re.fullmatch(r"\d{1,3}(?:,\d{3})+", digits)
        digits = digits.replace(",", "") if thousands else digits.replace(",", ".", 1).replace(",", "")
    try:
        value = float(digits)
    except ValueError:  # "1.2.3" is a version, not a time
        return None
    unit = _UNIT.search(text, match.end())
    seconds = value * (_SECONDS_PER_UNIT[unit.group(1).lower()] if unit else default_unit)
    return seconds if math.isfinite(seconds) else None


def table_ratio(
    rows: tuple[Measurement, ...], track: str | None, threads: int | None
) -> tuple[float | None, int | None]:
    """(ratio, thread count it is about). seq: best language time / best C time; par: N / speedup(N)."""
    if track in ("seq", None):
        ratio = _seq_ratio(rows)
        if ratio is not None or track == "seq":
            return ratio, None
    return _par_ratio(rows, threads)


def significant(value: float) -> float | None:
    """Three significant digits, as people write ratios; None for what no measurement gives (0, inf, nan)."""
    rounded = float(f"{value:.3g}")
    return rounded if math.isfinite(rounded) and rounded > 0 else None


def _seq_ratio(rows: tuple[Measurement, ...]) -> float | None:
    language = [r.seconds for r in rows if r.impl == "language" and r.seconds is not None]
    c = [r.seconds for r in rows if r.impl == "c" and r.seconds]
    if not language or not c:
        return None
    return significant(min(language) / min(c)) if min(language) > 0 else None


def _par_ratio(rows: tuple[Measurement, ...], threads: int | None) -> tuple[float | None, int | None]:
    # Unlabelled rows in a par table are the language's own runs at different thread counts.
    runs = [r for r in rows if r.impl == "language" and r.threads and r.seconds is not None]
    runs = runs or [r for r in rows if r.impl == "" and r.threads and r.seconds is not None]
    best: dict[int, float] = {}
    for run in runs:
        best[run.threads] = min(run.seconds, best.get(run.threads, run.seconds))
    counts = [n for n in best if n > 1]
    if 1 not in best or not best[1] or not counts:
        return None, max(counts, default=None)
    n = threads if threads in best and threads > 1 else max(counts)
    speedup = best[1] / best[n] if best[n] > 0 else None
    return (significant(n / speedup) if speedup else None), n


def _columns(header: tuple[str, ...]) -> tuple[dict[str, int], float]:
    columns: dict[str, int] = {}
    time_unit = 1.0
    for index, text in enumerate(header):
        words = _HEADER_WORDS.findall(_MARKUP.sub("", text).lower())
        for role, synonyms in _COLUMN_WORDS.items():
            if role not in columns and any(word in synonyms for word in words):
                columns[role] = index
                if role == "time":
                    time_unit = next((_SECONDS_PER_UNIT[w] for w in words if w in _SECONDS_PER_UNIT), 1.0)
                break
        else:
            # A header that is only a unit, "(ms)", is a time column too.
            unit = next((w for w in words if w in _SECONDS_PER_UNIT and w != "s"), None)
            if unit and "time" not in columns:
                columns["time"], time_unit = index, _SECONDS_PER_UNIT[unit]
    if "label" not in columns and header and 0 not in columns.values():
        columns["label"] = 0  # first column names the row even when its header is blank or unusual
    return columns, time_unit


def _int_of(text: str) -> int | None:
    match = _COUNT.search(text)
    return int(match.group(0)) if match else None
