"""Facts stated in prose: ratios ("C is 9.8x faster"), speedups ("1.9x speedup on 8 threads"), track, backend."""
from __future__ import annotations

import re
from dataclasses import dataclass

# Decimal comma tolerated ("9,8x"). Bounded and anchored to whole digit runs: a 100,000-digit run is no ratio,
# and matching it must stay linear.
_NUM = r"(?<![\d.,])(\d{1,9}(?:[.,]\d{1,12})?)(?!\d)"
_COUNT = r"(?<![\d.,])(\d{1,6})(?!\d)"  # a thread count
_TIMES = r"\s*[x\u00d7X](?![A-Za-z])"  # 9.8x, 12.3×, 3X
_APPROX = r"(?:~\s*|\u2248\s*|(?i:about|roughly|around|only|just|nearly|almost)\s+)?"
_WORKERS = r"(?i:threads?|tomes?|cores?|workers?)\b"
_END = r"(?!\w|[.,]\d)"  # the number ends here, though a sentence may ("ratio: 3.4.")
_LEAD = r"[\s*_:=]{0,8}(?:(?i:of|is|was|at)\s+)?"  # "Ratio: ", "**Ratio:** ", "speedup of ", "ratio is "

_RATIO_LABEL = re.compile(rf"(?i:\bratio\b){_LEAD}{_APPROX}{_NUM}(?:{_TIMES})?{_END}")
_SEQ_RATIO = (
    # "C is 9.8x faster", "the C translation (gcc -O2) is ~9.8x faster"
    re.compile(rf"\bC\b[^.\n]{{0,60}}?{_APPROX}{_NUM}{_TIMES}\s*(?i:faster|quicker)"),
    # "3.4x slower than C", "3.4x slower than the 1-to-1 C translation", "3.4x slowdown vs C"
    re.compile(rf"{_NUM}{_TIMES}\s*(?i:slower|slowdown)\s+(?i:than|vs\.?|versus|compared to|against)\s+"
               rf"(?:(?i:the|its|our)\s+)?(?:(?i:equivalent|1-to-1|hand-written|handwritten)\s+)?(?:C|gcc|clang)\b"),
)
_SPEEDUP = (
    # "speedup 1.9x on 8 threads", "speedup of only 1.9x with 16 tomes", "speed-up: 1.9"
    re.compile(rf"(?i:speed-?up){_LEAD}{_APPROX}{_NUM}(?:{_TIMES})?{_END}"
               rf"(?:[^.\n\d]{{0,30}}?(?i:on|with|at|using|for|across)\s+{_COUNT}\s*{_WORKERS})?"),
    # "1.9x speedup with 8 threads", "1.9x faster on 8 threads" (the latter only in a sentence without C)
    re.compile(rf"{_NUM}{_TIMES}\s*(?i:speed-?up|scaling)"
               rf"(?:[^.\n\d]{{0,30}}?(?i:on|with|at|using|for|across)\s+{_COUNT}\s*{_WORKERS})?"),
)
_FASTER_ON_THREADS = re.compile(rf"{_NUM}{_TIMES}\s*(?i:faster)\s+(?i:on|with|at|using)\s+{_COUNT}\s*{_WORKERS}")
_THREADS = re.compile(rf"(?<![\w.]){_COUNT}[\s-]*{_WORKERS}|(?i:\b(?:threads|tomes)\b)[\s*_]*[:=][\s*_]*{_COUNT}\b")
_C_WORD = re.compile(r"\bC\b")
_TRACK_LABEL = re.compile(r"(?i:\btrack\b)[\s*_]*[:=][\s*_`]*(?i:(seq|par))\b")
_PAR_WORDS = re.compile(r"(?i:\bparallel\w*|\bspeed-?ups?\b|\bscal(?:ing|ability)\b|\bmulti-?thread\w*)")
_SEQ_WORDS = re.compile(r"(?i:than|vs\.?|versus|against|compared to)\s+(?:(?i:the|its)\s+)?C\b|\bC\s+(?i:version|"
                        r"translation|baseline|code|implementation)\b|(?i:\b1-to-1\b)")
_BACKEND_WORDS = (
    ("metal", re.compile(r"(?i:(?<!bare )\bmetal\b|\bmsl\b)")),  # "bare metal" is a CPU machine
    ("cuda", re.compile(r"(?i:\bcuda\b|\bnvidia\b|\bgeforce\b|\brtx\s*\d)")),
)
_GPU = re.compile(r"(?i:\bgpus?\b)")
_C_BACKEND = re.compile(r"(?i:\bbackend\b)[\s*_:=`]*C\b|\bC\s+(?i:backend)\b|(?i:\bcpu\b)")


@dataclass(frozen=True)
class Fact:
    """One value found in prose, with the 1-based line it was found on."""

    value: object
    line: int


@dataclass(frozen=True)
class ProseFacts:
    """Everything prose states or suggests; the parser picks what fits the resolved track."""

    stated_ratio: Fact | None = None  # "Ratio: 12.3x" (either track)
    seq_ratio: Fact | None = None  # "3.4x slower than C"
    speedup: Fact | None = None  # achieved speedup "1.9x"
    speedup_threads: Fact | None = None  # the thread count the speedup was measured on
    threads: Fact | None = None  # first thread count > 1 anywhere
    track: Fact | None = None  # from an explicit "Track: par" or the kind of ratio stated
    track_hint: Fact | None = None  # from wording alone ("parallel", "8 threads", "than C"): weaker than a table
    backend: Fact | None = None
    backend_is_explicit: bool = False


def extract_prose_facts(lines: list[tuple[int, str]], block_langs: tuple[str, ...] = ()) -> ProseFacts:
    """Facts from prose lines `(line number, text)`: the first match of each kind wins."""
    found: dict[str, Fact] = {}
    par_hint = seq_hint = None
    backend_hits: dict[str, list[int]] = {"metal": [], "cuda": []}
    gpu_line = c_backend_line = None
    for number, text in lines:
        _first(found, "stated_ratio", _RATIO_LABEL, text, number)
        _first(found, "track_label", _TRACK_LABEL, text, number)
        for pattern in _SEQ_RATIO:
            _first(found, "seq_ratio", pattern, text, number)
        _speedups(found, text, number)
        for match in _THREADS.finditer(text):
            count = int(match.group(1) or match.group(2))
            if count > 1 and "threads" not in found:
                found["threads"] = Fact(count, number)
            if count > 1 and par_hint is None:
                par_hint = number
        if par_hint is None and _PAR_WORDS.search(text):
            par_hint = number
        if seq_hint is None and _SEQ_WORDS.search(text):
            seq_hint = number
        for backend, pattern in _BACKEND_WORDS:
            backend_hits[backend].extend(number for _ in pattern.finditer(text))
        if gpu_line is None and _GPU.search(text):
            gpu_line = number
        if c_backend_line is None and _C_BACKEND.search(text):
            c_backend_line = number
    for lang in block_langs:
        if lang in backend_hits:
            backend_hits[lang].append(0)
    return ProseFacts(
        stated_ratio=_as_float_fact(found.get("stated_ratio")),
        seq_ratio=_as_float_fact(found.get("seq_ratio")),
        speedup=_as_float_fact(found.get("speedup")),
        speedup_threads=found.get("speedup_threads"),
        threads=found.get("threads"),
        track=_track(found),
        track_hint=_track_hint(par_hint, seq_hint),
        backend=_backend(backend_hits, gpu_line, c_backend_line),
        backend_is_explicit=bool(backend_hits["metal"] or backend_hits["cuda"] or gpu_line or c_backend_line),
    )


def _first(found: dict, kind: str, pattern: re.Pattern, text: str, number: int) -> None:
    if kind not in found:
        match = pattern.search(text)
        if match:
            found[kind] = Fact(match.group(1), number)


def _speedups(found: dict, text: str, number: int) -> None:
    if "speedup" in found:
        return
    candidates = [match for pattern in _SPEEDUP for match in [pattern.search(text)] if match]
    if not _C_WORD.search(text):
        candidates += [match for match in [_FASTER_ON_THREADS.search(text)] if match and int(match.group(2)) > 1]
    if not candidates:
        return
    match = min(candidates, key=lambda m: (m.group(2) is None, m.start()))  # prefer one that names its threads
    found["speedup"] = Fact(match.group(1), number)
    if match.group(2) is not None and int(match.group(2)) >= 1:
        found["speedup_threads"] = Fact(int(match.group(2)), number)


def _as_float_fact(fact: Fact | None) -> Fact | None:
    if fact is None:
        return None
    value = float(str(fact.value).replace(",", "."))
    return Fact(value, fact.line) if value > 0 else None


def _track(found: dict) -> Fact | None:
    """An explicit "Track: par" label, else the kind of ratio stated first (a speedup is par, vs C is seq)."""
    if "track_label" in found:
        return Fact(found["track_label"].value.lower(), found["track_label"].line)
    kinds = [(found[kind].line, track) for kind, track in (("speedup", "par"), ("seq_ratio", "seq")) if kind in found]
    return _earliest(kinds)


def _track_hint(par_hint: int | None, seq_hint: int | None) -> Fact | None:
    return _earliest([(line, track) for line, track in ((par_hint, "par"), (seq_hint, "seq")) if line is not None])


def _earliest(candidates: list[tuple[int, str]]) -> Fact | None:
    if not candidates:
        return None
    line, track = min(candidates)
    return Fact(track, line)


def _backend(hits: dict[str, list[int]], gpu_line: int | None, c_backend_line: int | None) -> Fact | None:
    """Metal or CUDA by the more frequent mention; a bare GPU means CUDA; explicit C wording means c."""
    ranked = sorted(((len(lines), -min(lines), name) for name, lines in hits.items() if lines), reverse=True)
    if ranked:
        name = ranked[0][2]
        prose_lines = [line for line in hits[name] if line]  # 0 stands for a code block tagged so
        return Fact(name, min(prose_lines, default=1))
    if gpu_line is not None:
        return Fact("cuda", gpu_line)
    if c_backend_line is not None:
        return Fact("c", c_backend_line)
    return None
