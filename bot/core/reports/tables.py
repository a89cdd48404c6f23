"""Measurement tables as agents write them: rows per run, thread counts as columns, implementations as columns."""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

from bot.core.reports.records import Measurement

_COLUMN_WORDS = {
    "label": {"implementation", "impl", "program", "variant", "version", "language", "lang", "name", "build",
              "backend", "config", "configuration", "mode", "run", "what", "target", "device"},
    "speedup": {"speedup", "scaling", "vs"},
    "time": {"time", "wall", "seconds", "runtime", "median", "mean", "elapsed", "duration", "best", "min", "avg",
             "real", "p50"},
    "threads": {"threads", "thread", "tomes", "tome", "cores", "workers", "t", "nthreads"},
    "machine": {"machine", "host", "hardware", "box", "cpu"},
    "command": {"command", "cmd", "invocation"},
}
_SECONDS_PER_UNIT = {
    "ns": 1e-9, "us": 1e-6, "µs": 1e-6, "μs": 1e-6, "ms": 1e-3,
    "s": 1.0, "sec": 1.0, "secs": 1.0, "second": 1.0, "seconds": 1.0, "min": 60.0, "mins": 60.0,
}
_MARKUP = re.compile(r"[*_`~]+")
_HEADER_WORDS = re.compile(r"[a-zµμ]+")
# "15 400" and "15\u202f400" group thousands with a (thin) space, as many locales write them.
_NUMBER = re.compile(r"\d{1,3}(?:[ \u00a0\u2009\u202f]\d{3})+(?![\d.,])|\d{1,3}(?:[ \u00a0\u2009\u202f]\d{3})+[.,]\d+"
                     r"|\d+(?:[.,]\d+)*")
_COUNT = re.compile(r"(?<!\d)\d{1,6}(?!\d)")  # longer digit runs are no thread count (and int() refuses huge ones)
_UNIT = re.compile(r"(?<![a-zµμ])(ns|us|µs|μs|ms|s|secs?|seconds?|mins?)(?![a-z])", re.IGNORECASE)
_LANGUAGE_ROW = re.compile(r"(?i)\b(?:bend\w*|hvm\w*|language|runtime|interpreter|interp)\b|\.(?:bend|hvm\d?)\b"
                           r"|\bC backend\b")
_C_ROW = re.compile(r"(?i)^\s*(?:c|c99|c11|c17|cc|gcc|clang)(?![\w+#])|\b(?:gcc|clang|pthreads?|openmp)\b"
                    r"|(?<![\w-])C(?:\s+(?:translation|version|baseline|reference|port|code))\b")
_GPU_ROW = {"metal": re.compile(r"(?i)\bmetal\b|\bmsl\b|\bm[1-4]\s*(?:pro|max|ultra)?\s*gpu\b"),
            "cuda": re.compile(r"(?i)\bcuda\b|\bnvidia\b|\brtx\s*\d|\bgpu\b|\bh100\b|\ba100\b")}
_CPU_ROW = re.compile(r"(?i)\bcpu\b|\bc backend\b|\bpthreads?\b|\bthreads?\b|(?<![\w-])-?T\s?\d")
# A thread count inside a label or a header: "T8", "-T8", "8 threads", "threads=8", "8T", "t=8", "1 thread".
_THREADS_IN_TEXT = re.compile(
    r"(?<![\w.-])-{0,2}[Tt]\s?=?\s?(\d{1,6})(?![\w.])|(?<![\w.])(\d{1,6})\s*(?:threads?|tomes?|cores?|T)(?![\w])"
    r"|(?i:threads?|tomes?)\s*[=:]\s*(\d{1,6})(?!\d)")
_SPEEDUP_CELL = re.compile(r"(\d{1,6}(?:[.,]\d+)?)\s*[x\u00d7X]?")
# A count in a measure column: "1000.7M", "761.5 M", "1,000,700,000", "41.2 G", "0.240"; a suffix scales it.
_MEASURE_CELL = re.compile(r"^~?\s*(\d[\d,]*(?:\.\d+)?)\s*([kKmMgGbB]|[kKmMgG]i?)?\b(?!\s*[a-zA-Z]{2})")
_SCALE = {"k": 1e3, "m": 1e6, "g": 1e9, "b": 1e9, "ki": 1024.0, "mi": 1024.0 ** 2, "gi": 1024.0 ** 3}
# A header that names time only loosely ("runtime" is also what a column of runtime names is called): a column
# that names time outright ("time", a unit) takes the time role from it.
_LOOSE_TIME = {"runtime", "best", "min", "avg", "real"}

@dataclass(frozen=True)
class RawTable:
    """A GFM table as written: header cells and body rows with their 1-based file lines."""

    line: int
    header: tuple[str, ...]
    rows: tuple[tuple[int, tuple[str, ...]], ...]


@dataclass(frozen=True)
class _Header:
    roles: dict[str, int]
    unit: float
    thread_columns: dict[int, int | None]  # column index -> the thread count its header names (GPU: None)
    impl_columns: dict[int, str]  # column index -> language|c, when implementations are the columns
    units: dict[int, float]  # a column's own unit, from "(ms)" in its header
    texts: tuple[str, ...] = ()  # the header cells without markup
    others: dict[int, str] = field(default_factory=dict)  # columns of no role: another measure, or more label


def measurements_of(table: RawTable) -> tuple[Measurement, ...]:
    """The table's runs as measurements, whichever way round the table is written."""
    header = _read_header(table.header)
    rows: list[Measurement] = []
    for line, raw_cells in table.rows:
        cells = [_MARKUP.sub("", c).strip() for c in raw_cells]
        label = _cell(cells, header.roles.get("label"))
        if header.thread_columns:
            label = _cell(cells, 0)  # `| threads | 1 | 2 |`: the header's first cell names the row labels
            rows += _thread_column_runs(header, cells, label, line)
        elif header.impl_columns:
            rows += _impl_column_runs(header, cells, label, line)
        else:
            rows.append(_row_run(header, cells, raw_cells, label, line))
    return tuple(rows)


def has_time_column(table: RawTable) -> bool:
    header = _read_header(table.header)
    return "time" in header.roles or bool(header.thread_columns) or bool(header.impl_columns)


def impl_of(label: str) -> str:
    """language when the label names the language (or only a GPU), c when it names C or a C compiler, else ''."""
    if _LANGUAGE_ROW.search(label):
        return "language"
    if _C_ROW.search(label):
        return "c"
    if backend_of(label) in ("metal", "cuda"):
        return "language"
    return ""


def backend_of(label: str) -> str:
    """metal, cuda or c when a label says where the run ran; '' when it does not."""
    for name, pattern in _GPU_ROW.items():
        if pattern.search(label):
            return name
    return "c" if _CPU_ROW.search(label) else ""


def threads_in(text: str) -> int | None:
    match = _THREADS_IN_TEXT.search(text)
    if match is None:
        return None
    return int(next(group for group in match.groups() if group is not None))


def seconds_of(text: str, default_unit: float = 1.0) -> float | None:
    """ "1.2 s", "850 ms", "12µs", "0,9s", "1,234 ms" -> seconds; a bare number is in `default_unit`."""
    match = _NUMBER.search(text)
    if match is None:
        return None
    digits = re.sub(r"[ \u00a0\u2009\u202f]", "", match.group(0))
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


def _row_run(header: _Header, cells: list[str], raw_cells: tuple[str, ...], label: str, line: int) -> Measurement:
    counts, more = _other_columns(header, cells)
    label = " · ".join(part for part in (label, *more) if part)  # `| input | runtime | time |`: both name the row
    threads_cell = _cell(cells, header.roles.get("threads"))
    threads = threads_in(threads_cell) or _int_of(threads_cell)  # `hvm4 -T12` is 12 threads, not 4
    if not label and re.search(r"[A-Za-z]{2}", threads_cell):
        label = threads_cell  # `| threads | time |` whose first column is `hvm4 -T1`: it names the run too
    if threads is None:
        threads = threads_in(label) or threads_in(_cell(cells, header.roles.get("command")))
    command_at = header.roles.get("command")
    return Measurement(
        label=label, impl=impl_of(label) or _impl_among(more),
        seconds=seconds_of(_cell(cells, header.roles.get("time")), header.unit),
        threads=threads, machine=_cell(cells, header.roles.get("machine")),
        command=raw_cells[command_at].strip().strip("`").strip() if command_at is not None
        and command_at < len(raw_cells) else "",
        line=line, backend=backend_of(label), speedup=_speedup_of(_cell(cells, header.roles.get("speedup"))),
        counts=counts,
    )


def _impl_among(words: list[str]) -> str:
    """`| 1M | C | 30 ms |`: the implementation a label cell names when the joined label ('1M · C') names none."""
    return next((found for found in map(impl_of, words) if found), "")


def _other_columns(header: _Header, cells: list[str]) -> tuple[tuple[tuple[str, float], ...], list[str]]:
    """A row's cells in columns of no role: numbers are another measure of the run (instructions, user time, a
    runtime's counter), words say more of what the row is (the implementation beside an input size)."""
    counts, words = [], []
    for index, name in header.others.items():
        text = _cell(cells, index)
        value = measure_of(text)
        if value is not None:
            counts.append((name, value))
        elif (re.search(r"[A-Za-z]{2}", text) or impl_of(text)) and len(text) <= 60:
            words.append(text)  # a bare `C` too: it names the row's implementation
    return tuple(counts), words


def measure_of(text: str) -> float | None:
    """ "1000.7M" -> 1.0007e9, "1,234" -> 1234.0, "0.24" -> 0.24; None for words or an empty cell."""
    match = _MEASURE_CELL.match(text.strip())
    if match is None:
        return None
    try:
        value = float(match.group(1).replace(",", ""))
    except ValueError:
        return None
    scale = _SCALE.get((match.group(2) or "").lower(), 1.0)
    return value * scale if value > 0 and math.isfinite(value * scale) else None


def _thread_column_runs(header: _Header, cells: list[str], label: str, line: int) -> list[Measurement]:
    """`| impl | T1 | T2 | T8 |`: one run per thread column; a row labelled speedup holds speedups."""
    is_speedup_row = "speedup" in label.lower() or "scaling" in label.lower()
    unit = next((u for word, u in _SECONDS_PER_UNIT.items() if re.search(rf"\(\s*{word}\s*\)", label)), header.unit)
    runs = []
    for index, threads in header.thread_columns.items():
        text = _cell(cells, index)
        if not text:
            continue
        # `| | Metal -t 1 | C backend -t 10 |`: a column may name the run's backend too; the row names the rest.
        run_label = " · ".join(part for part in (label, header.texts[index]) if part)
        seconds = None if is_speedup_row else seconds_of(text, header.units.get(index, unit))
        runs.append(Measurement(label=run_label, impl=impl_of(run_label) if not is_speedup_row else "",
                                seconds=seconds, threads=threads, machine=_cell(cells, header.roles.get("machine")),
                                command="", line=line, backend=backend_of(run_label),
                                speedup=_speedup_of(text) if is_speedup_row else None))
    return runs


def _impl_column_runs(header: _Header, cells: list[str], label: str, line: int) -> list[Measurement]:
    """`| threads | bend (s) | C (s) |`: one run per implementation column, the row naming the threads."""
    threads = _int_of(_cell(cells, header.roles.get("threads"))) or threads_in(label) or _int_of(label)
    runs = []
    for index, impl in header.impl_columns.items():
        text = _cell(cells, index)
        if text:
            runs.append(Measurement(label=_header_label(header, index), impl=impl,
                                    seconds=seconds_of(text, header.units.get(index, header.unit)), threads=threads,
                                    machine=_cell(cells, header.roles.get("machine")), command="", line=line,
                                    backend=""))
    return runs


def _header_label(header: _Header, index: int) -> str:
    return {"language": "language", "c": "C"}[header.impl_columns[index]]


def _read_header(cells: tuple[str, ...]) -> _Header:
    roles: dict[str, int] = {}
    unit = 1.0
    thread_columns: dict[int, int | None] = {}
    impl_columns: dict[int, str] = {}
    units: dict[int, float] = {}
    others: dict[int, str] = {}
    loose_time = ""
    for index, raw in enumerate(cells):
        text = _MARKUP.sub("", raw).strip()
        words = _HEADER_WORDS.findall(text.lower())
        own_unit = next((_SECONDS_PER_UNIT[w] for w in words if w in _SECONDS_PER_UNIT), None)
        if own_unit is not None:
            units[index] = own_unit
        threads = threads_in(text) if index else None
        if threads is not None or (index and re.fullmatch(r"\d{1,6}", text)):
            thread_columns[index] = threads if threads is not None else int(text)
            continue
        role = next((r for r, synonyms in _COLUMN_WORDS.items() if r not in roles and any(w in synonyms
                                                                                         for w in words)), None)
        if role is None and "time" in roles and loose_time and _names_time_outright(words):
            others[roles["time"]] = loose_time  # `| runtime | time |`: the first only names what ran
            role, loose_time = "time", ""
        if index == 0 and role != "threads":
            role = "label"  # the first column names the row, whatever its header says
        names_time = any(w in _COLUMN_WORDS["time"] or w in _SECONDS_PER_UNIT for w in words)
        impl = impl_of(text) if index and (role in (None, "time") or names_time) else ""
        if impl:
            impl_columns[index] = impl
            continue
        if role is not None:
            roles[role] = index
            if role == "time":
                unit = own_unit or 1.0
                loose_time = " ".join(words) if not _names_time_outright(words) else ""
        elif own_unit is not None and own_unit != 1.0 and "time" not in roles:
            roles["time"], unit = index, own_unit  # a header that is only a unit, "(ms)", is a time column too
        elif index:
            others[index] = " ".join(words) or text.lower()
    if "label" not in roles and cells and 0 not in roles.values():
        roles["label"] = 0
    if len(thread_columns) < 2:
        thread_columns = {}
    else:  # `| | CPU T1 | CPU T12 | CUDA | CUDA patched |`: a GPU column beside thread columns has no count of its own
        thread_columns.update({i: None for i, text in enumerate(cells) if i and i not in thread_columns
                               and backend_of(_MARKUP.sub("", text)) in ("metal", "cuda")})
        impl_columns = {i: impl for i, impl in impl_columns.items() if i not in thread_columns}
    if "time" in roles:  # `| input | runtime | time |`: a column named like an implementation holds names
        others.update({i: _MARKUP.sub("", cells[i]).strip().lower() for i in impl_columns})
        impl_columns = {}
    others = {i: name for i, name in others.items() if i not in roles.values() and i not in thread_columns
              and i not in impl_columns}
    return _Header(roles, unit, thread_columns, impl_columns, units, tuple(_MARKUP.sub("", c).strip() for c in cells),
                   others)


def _names_time_outright(words: list[str]) -> bool:
    return any(w in _SECONDS_PER_UNIT or (w in _COLUMN_WORDS["time"] and w not in _LOOSE_TIME) for w in words)


def _cell(cells: list[str], index: int | None) -> str:
    return cells[index] if index is not None and index < len(cells) else ""


def _speedup_of(text: str) -> float | None:
    match = _SPEEDUP_CELL.search(text)
    if match is None:
        return None
    value = float(match.group(1).replace(",", "."))
    return value if value > 0 else None


def _int_of(text: str) -> int | None:
    match = _COUNT.search(text)
    return int(match.group(0)) if match else None
