"""The phrasings prose facts are read from: one row per way agents state a fact, each with an example it reads."""
from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from itertools import islice

# Decimal comma tolerated ("9,8x"). Bounded and anchored to whole digit runs: a 100,000-digit run is no ratio,
# and matching it must stay linear.
NUM = r"(?<![\d.,])(?P<value>\d{1,9}(?:[.,]\d{1,12})?)(?!\d)"


def _count(name: str = "threads") -> str:
    """A thread count; alternatives name theirs threads_a, threads_b... (re allows a group name once)."""
    return rf"(?<![\d.,])(?P<{name}>\d{{1,6}})(?!\d)"


_COUNT = _count()
_TIMES = r"\s*[x\u00d7X](?![A-Za-z])"  # 9.8x, 12.3×, 3X
_APPROX = r"(?:~\s*|\u2248\s*|(?i:about|roughly|around|only|just|nearly|almost|merely|barely)\s+)?"
_WORKERS = r"(?i:threads?|tomes?|cores?|workers?|(?:p|e)-?cores?)\b"
_END = r"(?!\w|[.,]\d)"  # the number ends here, though a sentence may ("ratio: 3.4.")
_LEAD = r"[\s*_:=]{0,8}(?:(?i:of|is|was|at|only|just|reaches|reached)\s+)?"
# A thread count as agents write it: "8 threads", "T8", "-T8", "--threads 8", "-t 8", "8T".
_AT_THREADS = (rf"(?:{_count()}\s*-?\s*{_WORKERS}|(?<![\w-])-{{0,2}}T\s?{_count('threads_a')}\b"
               rf"|(?i:--threads[= ]|-t\s?){_count('threads_b')}\b|{_count('threads_c')}T\b)")
_ON = r"(?i:on|with|at|using|for|across|over|under|in)\s+"
_UNIT_TIME = (r"(?P<time>\d{1,9}(?:[.,]\d{1,9})?)\s*(?P<unit>ns|us|µs|μs|ms|s|sec|secs|seconds?|min)\b")


@dataclass(frozen=True)
class Phrasing:
    """One way of stating a fact; `states` names the fact, `example` is a sentence it must read as `reads`."""

    id: str
    states: str  # stated_ratio | seq_ratio | speedup | expected | threads | track | thread_time
    pattern: re.Pattern
    example: str
    reads: dict
    applies: Callable[[str, re.Match], bool] = lambda text, match: True


def _p(pattern: str) -> re.Pattern:
    return re.compile(pattern)


_NO_C = re.compile(r"\bC\b")
_C_RUN = re.compile(r"(?i)\bC\b(?! backend)|pthreads?|\bgcc\b|\bclang\b|openmp")


def _c_before(text: str, match: re.Match) -> bool:
    """A speedup whose clause names C ("C with 8 pthreads gets 6.1x at T8") is C's, not the language's."""
    clause = re.split(r"[.;:,(]\s", text[max(0, match.start() - 60):match.start()])[-1]
    return _C_RUN.search(clause) is not None


_QUOTIENT = r"(?P<num>\d{1,9}(?:[.,]\d{1,9})?)\s*[/\u00f7]\s*(?P<den>\d{1,9}(?:[.,]\d{1,9})?)"

PHRASINGS: tuple[Phrasing, ...] = (
    # "Ratio = 12 / (1480 / 361) = 12 / 4.10 = 2.93": the number the chain of equalities ends in.
    Phrasing("ratio-equation", "stated_ratio",
             _p(rf"(?i:\bratio\b)(?:\s+(?:is|of))?[\s*_:]{{0,4}}=?\s*(?:[\d\s.,/()\u00d7x*\u00f7-]{{1,40}}?=\s*)+"
                rf"{NUM}(?:{_TIMES})?{_END}"),
             "Ratio = 12 / (1480 / 361) = 12 / 4.10 = 2.93", {"value": 2.93}),
    # "ratio 12 / 4.0", "ratio = 8 / 3.8": the quotient's result, never its numerator.
    Phrasing("ratio-quotient", "stated_ratio",
             _p(rf"(?i:\bratio\b)(?:\s+(?:is|of))?[\s*_:=]{{0,6}}(?:(?i:ideal\s*/\s*achieved|N\s*/\s*speedup)\s*=\s*)?"
                rf"{_QUOTIENT}(?:{_TIMES})?(?:\s*[=\u2248]\s*{NUM})?"),
             "ratio = 8 / 3.8", {"value": 8 / 3.8}),
    Phrasing("ratio-label", "stated_ratio", _p(rf"(?i:\bratio\b)(?!\s+(?:of|between)\s+\D){_LEAD}{_APPROX}{NUM}"
                                              rf"(?:{_TIMES})?{_END}(?!\s*[/\u00f7])"),
             "**Ratio:** 12.3x", {"value": 12.3}),
    Phrasing("c-faster", "seq_ratio", _p(rf"\bC\b[^.\n]{{0,60}}?{_APPROX}{NUM}{_TIMES}\s*(?i:faster|quicker)"),
             "The C translation (gcc -O2) is ~9.8x faster.", {"value": 9.8}),
    Phrasing("slower-than-c", "seq_ratio",
             _p(rf"{_APPROX}{NUM}{_TIMES}\s*(?i:slower|slowdown|behind|the time of|the runtime of)\s+"
                rf"(?:(?i:than|vs\.?|versus|compared to|against|relative to|of)\s+)?(?:(?i:the|its|our|a)\s+)?"
                rf"(?:(?i:equivalent|1-to-1|1:1|one-to-one|hand-written|handwritten|plain|native)\s+)?"
                rf"(?:C|gcc|clang)\b"),
             "Bend is 3,4× slower than the 1-to-1 C translation.", {"value": 3.4}),
    Phrasing("c-beats-by", "seq_ratio",
             _p(rf"\bC\b[^.\n]{{0,40}}?(?i:beats|outruns|wins)[^.\n]{{0,30}}?(?i:by)\s+{_APPROX}{NUM}{_TIMES}"),
             "The C translation beats it by 5.1x at one thread.", {"value": 5.1}),
    Phrasing("gap-vs-c", "seq_ratio",
             _p(rf"(?i:gap|slowdown|ratio)\s+(?i:vs\.?|versus|against|to|over)\s+(?:(?i:the)\s+)?C\b[\s*_:=]{{0,6}}"
                rf"(?:(?i:is|of)\s+)?{_APPROX}{NUM}(?:{_TIMES})?{_END}"),
             "Gap vs C: 7.2x", {"value": 7.2}),
    Phrasing("speedup-label", "speedup",
             _p(rf"(?i:speed-?up|scaling)(?!\s+(?:of|from)\s+(?:the|a)\b){_LEAD}{_APPROX}{NUM}(?:{_TIMES})?{_END}"
                rf"(?:[^.\n\d]{{0,30}}?{_ON}{_AT_THREADS})?"),
             "The speedup is only 1,9× with 8 threads.", {"value": 1.9, "threads": 8}),
    Phrasing("x-speedup", "speedup",
             _p(rf"{NUM}{_TIMES}\s*(?i:speed-?up|scaling|parallel speed-?up)"
                rf"(?:[^.\n\d]{{0,30}}?{_ON}{_AT_THREADS})?"),
             "1.9x speedup with 8 threads", {"value": 1.9, "threads": 8}),
    Phrasing("x-at-threads", "speedup",
             _p(rf"{_APPROX}{NUM}{_TIMES}(?:\s*(?i:speed-?up|over T1|over one thread|vs\.? T1))?\s*{_ON}"
                rf"{_AT_THREADS}"),
         "It reaches only 3.8× at T8.", {"value": 3.8, "threads": 8}, lambda text, match: not _c_before(text, match)),
    Phrasing("x-faster-at-threads", "speedup",
             _p(rf"{_APPROX}{NUM}{_TIMES}\s*(?i:faster)\s*{_ON}{_AT_THREADS}"),
             "It is only 4x faster on 32 threads.", {"value": 4.0, "threads": 32},
             lambda text, match: not _NO_C.search(text)),
    Phrasing("threads-give", "speedup",
             _p(rf"{_AT_THREADS}\s*(?i:give|gives|reach|reaches|get|gets|yield|yields|only give|only reach)\s+"
                rf"(?:(?i:a|an|only|just)\s+)?{_APPROX}{NUM}{_TIMES}"),
             "8 threads give only 2.9x.", {"value": 2.9, "threads": 8}),
    # What a GPU should reach, from a profile, a roofline or an estimate: the target of a GPU claim.
    Phrasing("expected-speedup", "expected",
             _p(rf"(?i:\bexpect(?:ed|s)?\b|\bshould\s+(?:reach|get|hit|be)\b|\bpredicts?\b|\bsuggests?\b"
                rf"|\btarget(?:ed)?\b|\bestimated?\b)(?:(?!(?i:achiev|actual|measured|\bbut\b|\bonly\b))[^.\n\d]){{0,60}}?"
                rf"{_APPROX}{NUM}{_TIMES}"),
             "The Instruments counters suggest about 24x over one CPU thread.", {"value": 24.0}),
    Phrasing("x-expected", "expected",
             _p(rf"{_APPROX}{NUM}{_TIMES}(?:(?:\s*(?i:speed-?up))?\s*(?=(?i:expected\b))|[^.\n\d]{{0,40}}?"
                rf"(?i:\bshould be (?:possible|reachable)|\b(?:is|was|are) (?:expected|reachable|possible)))"),
             "about 60x should be possible", {"value": 60.0}),
    Phrasing("threads-label", "threads",
             _p(rf"(?i:\b(?:threads|tomes|thread count)\b)[\s*_]*[:=][\s*_`]*{_COUNT}\b"),
             "threads: 12", {"threads": 12}),
    Phrasing("n-threads", "threads", _p(rf"(?<![\w.]){_COUNT}[\s-]*{_WORKERS}"),
             "on all 12 cores", {"threads": 12}),
    Phrasing("t-flag", "threads", _p(rf"(?<![\w-])(?:-{{0,2}}T\s?|(?i:--threads[= ])){_COUNT}\b"),
             "run with -T16", {"threads": 16}),
    Phrasing("thread-time", "thread_time",
             _p(rf"(?:(?<![\w-])-?T\s?{_COUNT}|{_count('threads_a')}\s*(?i:threads?|tomes?)|(?i:one thread))"
                rf"[\s*_:=(]{{0,4}}(?:(?i:takes?|took|in|runs? in|at)\s+)?{_UNIT_TIME}"),
             "T1 0.214 s, T10 0.031 s", {"threads": 1, "seconds": 0.214}),
    Phrasing("track-label", "track", _p(r"(?i:\btrack\b)[\s*_]*[:=][\s*_`]*(?P<track>(?i:seq|par))\b"),
             "Track: par", {"track": "par"}),
)
PHRASINGS_BY_ID = {p.id: p for p in PHRASINGS}


@dataclass(frozen=True)
class Hit:
    """One phrasing matched on one line: what it states, with the words it was read from."""

    phrasing: str
    states: str
    line: int
    quote: str
    value: float | None = None
    threads: int | None = None
    seconds: float | None = None
    track: str | None = None
    at: int = 0  # where in the paragraph the match starts: the sentence around it may name the thread count


MAX_HITS = 32  # per phrasing and paragraph: no report states a fact 32 times in one paragraph; a hostile one may

_SECONDS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "μs": 1e-6, "ms": 1e-3, "s": 1.0, "sec": 1.0, "secs": 1.0,
            "second": 1.0, "seconds": 1.0, "min": 60.0}


def hits_in(text: str, line: int) -> list[Hit]:
    """Every phrasing's matches in one paragraph, in table order, then by position."""
    found: list[Hit] = []
    for phrasing in PHRASINGS:
        for match in islice(phrasing.pattern.finditer(text), MAX_HITS):
            if not phrasing.applies(text, match):
                continue
            hit = _hit(phrasing, match, line)
            if hit is not None:
                found.append(hit)
    return found


def _hit(phrasing: Phrasing, match: re.Match, line: int) -> Hit | None:
    groups = match.groupdict()
    count = next((v for k, v in groups.items() if k.startswith("threads") and v is not None), None)
    threads = 1 if phrasing.states == "thread_time" and count is None else _int(count)
    value = _float(groups.get("value"))
    if value is None and groups.get("num") is not None:
        numerator, denominator = _float(groups["num"]), _float(groups["den"])
        value = numerator / denominator if numerator and denominator else None
    seconds = None
    if groups.get("time") is not None:
        seconds = _float(groups["time"])
        seconds = seconds * _SECONDS[groups["unit"].lower()] if seconds is not None else None
    if ("value" in phrasing.pattern.groupindex or "num" in phrasing.pattern.groupindex) and (value is None
                                                                                          or value <= 0):
        return None
    quote = " ".join(match.group(0).split()).strip(" *_:,.")
    if phrasing.states == "stated_ratio" and threads is None:  # "ratio = 16 / 4.1": par's N / speedup
        stated = _RATIO_NUMERATOR.match(quote)
        threads = int(stated.group(1)) if stated else None
    return Hit(phrasing.id, phrasing.states, line, quote[:80], value, threads, seconds,
               (groups.get("track") or "").lower() or None, match.start())


_RATIO_NUMERATOR = re.compile(r"(?i)ratio\D{0,8}?(\d{1,6})\s*[/\u00f7]\s*\(?\d")


def _float(text: str | None) -> float | None:
    if text is None:
        return None
    try:
        return float(text.replace(",", "."))
    except ValueError:
        return None


def _int(text: str | None) -> int | None:
    return int(text) if text is not None else None
