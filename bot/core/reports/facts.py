"""Facts stated in prose, read through the PHRASINGS table: ratios, speedups, thread counts, track, backend."""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Generic, TypeVar

from bot.core.reports.phrasings import Hit, hits_in

_PAR_WORDS = re.compile(r"(?i:\bparallel\w*|\bspeed-?ups?\b|\bscal(?:ing|ability)\b|\bmulti-?thread\w*)")
_SEQ_WORDS = re.compile(r"(?i:than|vs\.?|versus|against|compared to)\s+(?:(?i:the|its)\s+)?C\b|\bC\s+(?i:version|"
                        r"translation|baseline|code|implementation)\b|(?i:\b1-to-1\b)")
_BACKEND_WORDS = (
    ("metal", re.compile(r"(?i:(?<!bare )\bmetal\b|\bmsl\b)")),  # "bare metal" is a CPU machine
    ("cuda", re.compile(r"(?i:\bcuda\b|\bnvidia\b|\bgeforce\b|\brtx\s*\d)")),
)
V = TypeVar("V", int, float, str)

_GPU = re.compile(r"(?i:\bgpus?\b)")
_C_BACKEND = re.compile(r"(?i:\bbackend\b)[\s*_:=`]*C\b|\bC\s+(?i:backend|runtime|threads)\b|(?i:\bcpu\b)")


@dataclass(frozen=True)
class Fact(Generic[V]):
    """One value found in prose, with the 1-based line it was found on and the words it was read from."""

    value: V
    line: int
    quote: str = ""


@dataclass(frozen=True)
class ProseFacts:
    """Everything prose states or suggests; the parser picks what fits the resolved track."""

    stated_ratio: Fact[float] | None = None  # "Ratio: 12.3x" (either track)
    seq_ratio: Fact[float] | None = None  # "3.4x slower than C"
    speedup: Fact[float] | None = None  # achieved speedup "1.9x"
    speedup_threads: Fact[int] | None = None  # the thread count the speedup was measured on
    ratio_threads: Fact[int] | None = None  # N of a stated "ratio = N / speedup"
    threads: Fact[int] | None = None  # first thread count > 1 anywhere
    track: Fact[str] | None = None  # from an explicit "Track: par" or the kind of ratio stated
    track_hint: Fact[str] | None = None  # from wording alone ("parallel", "8 threads", "than C"): weaker than a table
    backend: Fact[str] | None = None
    backend_is_explicit: bool = False
    thread_times: tuple[Hit, ...] = ()  # "T1 0.214 s, T10 0.031 s": times at thread counts, for a speedup
    claim_threads: Fact[int] | None = None  # the one thread count the sentence stating the ratio (or speedup) names
    expected: Fact[float] | None = None  # the speedup a GPU should reach ("the profile suggests about 24x")


def extract_prose_facts(lines: list[tuple[int, str]], block_langs: tuple[str, ...] = ()) -> ProseFacts:
    """Facts from prose lines `(line number, text)`: the first hit of each kind wins (see PHRASINGS)."""
    first: dict[str, Hit] = {}
    texts: dict[int, str] = {}
    speedups: list[Hit] = []
    thread_times: list[Hit] = []
    par_hint = seq_hint = None
    backend_hits: dict[str, list[int]] = {"metal": [], "cuda": []}
    gpu_line = c_backend_line = None
    for number, text in lines:
        texts[number] = text
        for hit in hits_in(text, number):
            if hit.states == "speedup":
                speedups.append(hit)
            elif hit.states == "thread_time":
                thread_times.append(hit)
            elif hit.states == "threads" and (hit.threads or 0) <= 1:
                continue
            first.setdefault(hit.states, hit)
            if hit.states in ("threads", "thread_time", "speedup") and par_hint is None and (hit.threads or 0) > 1:
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
    speedup = _best_speedup(speedups)
    return ProseFacts(
        stated_ratio=_value_fact(first.get("stated_ratio")),
        seq_ratio=_value_fact(first.get("seq_ratio")),
        speedup=_value_fact(speedup),
        speedup_threads=Fact(speedup.threads, speedup.line, speedup.quote) if speedup and speedup.threads else None,
        threads=_threads_fact(first.get("threads")),
        ratio_threads=_threads_fact(first.get("stated_ratio")) if first.get("stated_ratio") else None,
        track=_track(first, speedup),
        track_hint=_track_hint(par_hint, seq_hint),
        backend=_backend(backend_hits, gpu_line, c_backend_line),
        backend_is_explicit=bool(backend_hits["metal"] or backend_hits["cuda"] or gpu_line or c_backend_line),
        thread_times=tuple(thread_times),
        claim_threads=_claim_threads(texts, first.get("stated_ratio"), speedup),
        expected=_value_fact(first.get("expected")),
    )


# A thread count in a sentence: "T12", "-T16", "12 threads", "6 P-cores", and the N of "an ideal 12x".
_SENTENCE_THREADS = re.compile(r"(?<![\w-])-{0,2}T\s?(\d{1,6})\b|(?<![\w.])(\d{1,6})[\s-]*(?i:threads?|tomes?|cores?|"
                               r"workers?|[pe]-?cores?)\b|(?i:\bideal(?:\s+(?:speed-?up|of|is))*\s+)(\d{1,6})\s*[x\u00d7X]")
_SENTENCE_END = re.compile(r"(?<=[.;!?])\s+")


def _claim_threads(texts: dict[int, str], ratio: Hit | None, speedup: Hit | None) -> Fact[int] | None:
    """The thread count the claim is about, when the sentence that states it names exactly one above 1."""
    for hit in (ratio, speedup):
        if hit is None:
            continue
        if hit.threads and hit.threads > 1:
            return Fact(hit.threads, hit.line, hit.quote)
        # "At T12 the speedup stalls at 3.1x of an ideal 12x; ratio 3.9": a bare ratio follows its claim.
        for sentence in _sentences_at(texts.get(hit.line, ""), hit.at):
            counts = {int(next(g for g in m.groups() if g)) for m in _SENTENCE_THREADS.finditer(sentence)} - {0, 1}
            if len(counts) == 1:
                return Fact(counts.pop(), hit.line, " ".join(sentence.split())[:80])
            if counts:
                return None  # the sentence names several counts: which one the claim is about is not said
    if ratio is not None or speedup is not None:
        return None
    for line, text in sorted(texts.items()):  # no phrasing read the claim: the first sentence that states one
        for sentence in _SENTENCE_END.split(text):
            counts = {int(next(g for g in m.groups() if g)) for m in _SENTENCE_THREADS.finditer(sentence)} - {0, 1}
            if len(counts) == 1 and _CLAIM.search(sentence) and not _C_CLAIM.search(sentence):
                return Fact(counts.pop(), line, " ".join(sentence.split())[:80])
    return None


_CLAIM = re.compile(r"\d\s*[x\u00d7X](?![A-Za-z]).*(?i:speed-?up|scal|ideal|faster)|(?i:speed-?up|scal|ideal|faster)"
                    r".*\d\s*[x\u00d7X](?![A-Za-z])")
_C_CLAIM = re.compile(r"\bC\b(?!\s+backend)|(?i:pthread|openmp)")


def _sentences_at(text: str, at: int) -> tuple[str, ...]:
    """The sentence holding position `at`, then the one before it."""
    start, previous = 0, ""
    for boundary in _SENTENCE_END.finditer(text):
        if boundary.start() > at:
            return text[start:boundary.start()], previous
        previous, start = text[start:boundary.start()], boundary.end()
    return text[start:], previous


def _best_speedup(speedups: list[Hit]) -> Hit | None:
    """The first speedup that names its thread count, else the first one."""
    named = [hit for hit in speedups if hit.threads]
    found = named or speedups
    return found[0] if found else None


def _value_fact(hit: Hit | None) -> Fact[float] | None:
    return Fact(hit.value, hit.line, hit.quote) if hit is not None and hit.value else None


def _threads_fact(hit: Hit | None) -> Fact[int] | None:
    return Fact(hit.threads, hit.line, hit.quote) if hit is not None and hit.threads else None


def _track(first: dict[str, Hit], speedup: Hit | None) -> Fact[str] | None:
    """An explicit "Track: par" label, else the kind of ratio stated first (a speedup is par, vs C is seq)."""
    stated = first.get("track")
    if stated is not None and stated.track is not None:
        return Fact(stated.track, stated.line, stated.quote)
    kinds = [(hit.line, track) for hit, track in ((speedup, "par"), (first.get("seq_ratio"), "seq")) if hit]
    return _earliest(kinds)


def _track_hint(par_hint: int | None, seq_hint: int | None) -> Fact[str] | None:
    return _earliest([(line, track) for line, track in ((par_hint, "par"), (seq_hint, "seq")) if line is not None])


def _earliest(candidates: list[tuple[int, str]]) -> Fact[str] | None:
    if not candidates:
        return None
    line, track = min(candidates)
    return Fact(track, line)


def _backend(hits: dict[str, list[int]], gpu_line: int | None, c_backend_line: int | None) -> Fact[str] | None:
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
