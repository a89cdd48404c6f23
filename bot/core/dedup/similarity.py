"""What retrieval compares between two reports: their words, the shape of their code, the places they blame."""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from pygments.lexers import CLexer, PythonLexer
from pygments.token import Comment, Keyword, Name, Number, Operator, Punctuation, String, Text

from bot.core.dedup.mechanisms import mechanisms
from bot.core.reports.records import PerfIssue

# Stored features (the retrieval_features table) of another version are computed again: bump it whenever
# what `features()` returns for the same report changes.
FEATURES_VERSION = "3"
SHINGLE = 5  # tokens per shingle: long enough to mean a construct, short enough to survive renames
_WORD = re.compile(r"[a-z][a-z0-9_]{2,}")
_STOP = frozenset(["the", "and", "for", "that", "this", "with", "from", "are", "was", "were", "but", "not", "all",
                   "any", "can", "has", "have", "had", "its", "into", "than", "then", "there", "their", "them", "they",
                   "which", "while", "when", "where", "what", "who", "how", "why", "our", "out", "one", "two", "per",
                   "each", "very", "also", "more", "most", "much", "many", "some", "such", "only", "just", "over",
                   "under", "about", "after", "before", "because", "been", "being", "does", "did", "report", "language",
                   "program", "slow", "slower", "faster", "time", "times"])
_MACHINE = re.compile(r"[^a-z0-9]+")
_FILE = re.compile(r"\b[\w./-]+\.(?:c|h|cu|metal|rs|py|bend|hvm)\b")
_CODE_SPAN = re.compile(r"`([A-Za-z_][A-Za-z0-9_]{2,})(?:\(\))?`")


@dataclass(frozen=True)
class Features:
    """A report reduced to what retrieval compares."""

    slug: str
    words: tuple[str, ...]
    shingles: frozenset[str]
    locations: frozenset[str]


def words_of(text: str) -> tuple[str, ...]:
    return tuple(w for w in _WORD.findall(text.lower()) if w not in _STOP)


@lru_cache(maxsize=4)
def _lexer(lang: str) -> Any:  # a pygments Lexer; its stubs type token kinds as str, which `kind in Name` then refuses
    # The language's surface syntax is Python-like (def, if/else, return, indentation), so Python's lexer
    # tokenises it faithfully enough for shape; C code gets C's.
    return CLexer() if lang in ("c", "cuda", "metal") else PythonLexer()


def code_shape(code: str, lang: str) -> list[str]:
    """Tokens with identifiers, numbers and strings abstracted: the program's shape, not its names."""
    shape: list[str] = []
    for kind, value in _lexer(lang).get_tokens(code):
        if kind in Text or kind in Comment or not value.strip():
            continue
        if kind in Name:
            shape.append("ID")
        elif kind in Number:
            shape.append("NUM")
        elif kind in String:
            if not shape or shape[-1] != "STR":
                shape.append("STR")
        elif kind in Keyword or kind in Operator or kind in Punctuation:
            shape.append(value.strip())
        else:
            shape.append(value.strip())
    return shape


def shingles(tokens: list[str], k: int = SHINGLE) -> frozenset[str]:
    if len(tokens) < k:
        return frozenset({" ".join(tokens)}) if tokens else frozenset()
    return frozenset(" ".join(tokens[i:i + k]) for i in range(len(tokens) - k + 1))


def locations(text: str) -> frozenset[str]:
    """Files, functions in code spans, and the mechanisms a text speaks of (core/dedup/mechanisms.py)."""
    found = {f"file:{m.lower()}" for m in _FILE.findall(text)}
    found |= {f"fn:{m.lower()}" for m in _CODE_SPAN.findall(text) if "_" in m or m.islower()}
    found |= {f"concept:{name}" for name in mechanisms(text)}
    return frozenset(found)


def features(record: PerfIssue) -> Features:
    """Words from title, context and root cause; shingles of the language program; places the cause names."""
    sections = {s.name: s.text for s in record.sections}
    program = " ".join(b.code for b in record.code_blocks if b.lang == "language")
    blame = " ".join([sections.get("root_cause", ""), sections.get("fix", "")])
    return Features(record.slug, text_words(record), shingles(code_shape(program, "language")), locations(blame))


def text_words(record: PerfIssue) -> tuple[str, ...]:
    """The words BM25 compares: title, context and root cause, and the machines measured on (no lexing: cheap)."""
    sections = {s.name: s.text for s in record.sections}
    text = " ".join([record.title, sections.get("context", ""), sections.get("root_cause", "")])
    return words_of(text) + machines(record)


def machines(record: PerfIssue) -> tuple[str, ...]:
    """The machines a report measured on, as one word each ("machine_epyc_2s"): two reports of one symptom on
    one machine share a rare word even when their programs and prose differ; BM25 discounts a machine every
    report names."""
    named = {record.host or ""} | {m.machine for m in record.measurements}
    return tuple(sorted(f"machine_{_MACHINE.sub('_', m.lower()).strip('_')}" for m in named if m.strip()))


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    return len(a & b) / len(a | b) if a and b else 0.0


# --- What a root cause blames, for the reviewer: places and mechanism words, minus what the report rules out.

# A sentence that rules a place out ("the DUP on `n` is not what costs here", "under 3% of cycles") names it
# without blaming it; counting it would pair reports whose causes differ exactly there.
_RULED_OUT = re.compile(r"\bnot\b|n't\b|\bnothing\b|\bno longer\b|\brules? out\b|\bruled out\b|\bis clean\b|"
                        r"\brare\b|\binvisible\b|\bbarely\b|\bunchanged\b|\bunder \d+(?:\.\d+)?\s?%", re.I)
# Sentences, and the clauses after ", but" or ";": each is judged blaming or ruling out on its own.
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z`(])|\n\s*\n|;\s+|,\s+but\s+")
_SPAN = re.compile(r"`([^`]+)`")
_SNAKE = re.compile(r"\b[A-Za-z][A-Za-z0-9]*_[A-Za-z0-9_]+\b")
_PATH = re.compile(r"[\w./-]*?([\w-]+\.(?:c|h|cu|m|metal|rs|py))\b")
# A span that is a command or a setting (`perf c2c`, `BEND_STATS=1`) names a tool, not a place.
_COMMAND = re.compile(r"^\s*[\w.-]+\s+-?[\w-]+\s*$|=")
_TOKEN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_TOOLS = frozenset(["perf", "nsys", "ncu", "nvprof", "strace", "ltrace", "valgrind", "gdb", "gcc", "clang", "nvcc",
                    "bend", "hvm", "hvm4", "instruments"])
# Words every root cause uses whatever it blames.
_GENERIC = frozenset(["interaction", "interactions", "node", "nodes", "thread", "threads", "cycles", "cycle", "shows",
                      "show", "per", "call", "calls", "each", "every", "time", "times", "run", "runs", "cost", "costs",
                      "perf", "share", "percent", "same", "here", "case", "value", "values", "number", "numbers", "use",
                      "used", "uses", "one", "two", "three", "four", "five", "first", "second", "new", "whole", "so"])


@dataclass(frozen=True)
class CauseProfile:
    """The runtime or compiler places a root cause blames, the files it names, its mechanism words and the
    mechanisms (core/dedup/mechanisms.py) those words and names describe."""

    places: frozenset[str]
    files: frozenset[str]
    words: frozenset[str]
    mechanisms: frozenset[str] = frozenset()


def _stem(word: str) -> str:
    for suffix in ("ations", "ation", "ings", "ing", "ies", "es", "ed", "s"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 4:
            return word[: -len(suffix)]
    return word


def cause_profile(record: PerfIssue) -> CauseProfile:
    """Places (functions named in the root cause but not defined by the report's program), files and words."""
    section = record.section("root_cause")
    if section is None or section.is_unknown:
        return CauseProfile(frozenset(), frozenset(), frozenset(), frozenset())
    program = " ".join(b.code for b in record.code_blocks if b.lang == "language")
    own_names = set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", program))
    places: set[str] = set()
    files: set[str] = set()
    words: set[str] = set()
    blamed: list[str] = []
    for sentence in _SENTENCE.split(section.text):
        if _RULED_OUT.search(sentence):
            continue
        blamed.append(sentence)
        files |= {f.lower() for f in _PATH.findall(sentence)}
        spans = [m for m in _SPAN.findall(sentence) if not _COMMAND.search(m)]
        prose = _SPAN.sub(" ", sentence)
        for token in [t for m in spans for t in _TOKEN.findall(_PATH.sub(" ", m))] + _SNAKE.findall(prose):
            if (len(token) > 2 and token not in own_names and token.lower() not in _TOOLS
                    and not (token.isupper() and "_" in token)):
                places.add(token.lower())
        words |= {_stem(w) for w in words_of(sentence) if w not in _GENERIC and w not in own_names}
    return CauseProfile(frozenset(places), frozenset(files), frozenset(words), mechanisms(" ".join(blamed)))


def overlap(a: frozenset[str], b: frozenset[str]) -> float:
    """Shared share of the smaller set: a broad report naming more places still matches a narrow one."""
    return len(a & b) / min(len(a), len(b)) if a and b else 0.0
