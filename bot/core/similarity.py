"""What retrieval compares between two reports: their words, the shape of their code, the places they blame."""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from pygments.lexers import CLexer, PythonLexer
from pygments.token import Comment, Keyword, Name, Number, Operator, Punctuation, String, Text

from bot.core.records import PerfIssue

# Stored features (the retrieval_features table) of another version are computed again: bump it whenever
# what `features()` returns for the same report changes.
FEATURES_VERSION = "1"
SHINGLE = 5  # tokens per shingle: long enough to mean a construct, short enough to survive renames
_WORD = re.compile(r"[a-z][a-z0-9_]{2,}")
_STOP = frozenset("""the and for that this with from are was were but not all any can has have had its into
than then there their them they which while when where what who how why our out one two per each very
also more most much many some such only just over under about after before because been being does did
report language program slow slower faster time times""".split())
_FILE = re.compile(r"\b[\w./-]+\.(?:c|h|cu|metal|rs|py|bend|hvm)\b")
_CODE_SPAN = re.compile(r"`([A-Za-z_][A-Za-z0-9_]{2,})(?:\(\))?`")
# Runtime concepts a root cause names; two reports blaming the same one likely share a cause.
CONCEPTS = {
    "dup": r"\bdup(?:s|lication|licate)?\b", "ope": r"\bope\b|\bopx\b|\bopy\b", "era": r"\bera(?:ser)?\b",
    "ref": r"\bref(?:s)?\b|\bexpand_ref\b", "alloc": r"\balloc\w*|\ballocation pointer\b|\bheap\b",
    "steal": r"\bsteal\w*|\bwork[- ]stealing\b", "contention": r"\bcontention\b|\bcontend\w*|\bcas\b|\batomic\w*",
    "u24": r"\bu24\b|\bbox(?:ed|ing)\b", "scrutinee": r"\bscrutinee\b|\bmatch(?:es)?\b",
    "tail": r"\btail[- ]?(?:call|recursi\w+)\b", "launch": r"\bkernel launch\w*|\blaunch(?:es)?\b",
    "concat": r"\bconcat\w*|\bquadratic\b", "granularity": r"\bgranularity\b|\bsplit\w*|\bchunk\w*",
    "memory": r"\bbandwidth\b|\bcache miss\w*|\bcoalesc\w*",
}
_CONCEPTS = {name: re.compile(pattern, re.I) for name, pattern in CONCEPTS.items()}


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
def _lexer(lang: str):
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
    """Files, functions in code spans, and runtime concepts a text names."""
    found = {f"file:{m.lower()}" for m in _FILE.findall(text)}
    found |= {f"fn:{m.lower()}" for m in _CODE_SPAN.findall(text) if "_" in m or m.islower()}
    found |= {f"concept:{name}" for name, pattern in _CONCEPTS.items() if pattern.search(text)}
    return frozenset(found)


def features(record: PerfIssue) -> Features:
    """Words from title, context and root cause; shingles of the language program; places the cause names."""
    sections = {s.name: s.text for s in record.sections}
    text = " ".join([record.title, sections.get("context", ""), sections.get("root_cause", "")])
    program = " ".join(b.code for b in record.code_blocks if b.lang == "language")
    blame = " ".join([sections.get("root_cause", ""), sections.get("fix", "")])
    return Features(record.slug, words_of(text), shingles(code_shape(program, "language")), locations(blame))


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    return len(a & b) / len(a | b) if a and b else 0.0
