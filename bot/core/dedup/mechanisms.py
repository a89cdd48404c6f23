"""The mechanisms a root cause describes, read from its words and from the names it blames.

Two reports of one CUDA kernel name the same kernel and driver function whatever their bottleneck; two reports
of one redex bag may share no name at all, one writing `bag_grow` and `memcpy`, the other "the growable array
... copied across". What tells them apart or together is the mechanism: register spills or uncoalesced loads,
a lock, a spin-wait, a copy on growth. Each family below is a mechanism in the words reports use for it;
snake_case names are read as words too (`bag_grow` says "grow", `pool_barrier` "barrier"), so a report that
names a function and one that describes it in words meet on the same family.
"""
from __future__ import annotations

import re

# One entry per mechanism; the pattern is matched on lowercased text. Retrieval indexes the same families
# (core/dedup/similarity.locations), so a candidate sharing a mechanism is found even when programs differ.
MECHANISMS = {
    # runtime operations
    "dup": r"\bdup(?:s|lication|licate[sd]?)?\b", "ope": r"\bope\b|\bopx\b|\bopy\b", "era": r"\bera(?:ser)?\b",
    "ref": r"\brefs?\b|\bexpand ref\b|\bre-?expan\w*", "u24": r"\bu24\b|\bbox(?:ed|ing)\b",
    "scrutinee": r"\bscrutinee\b|\bmatch(?:es)?\b", "tail": r"\btail[- ]?(?:call|recursi\w+)\b",
    "concat": r"\bconcat\w*|\bquadratic\b",
    # memory
    "alloc": r"\balloc\w*|\bheap\b|\bfree node\b|\bfresh (?:node|copy)\b|\bbump pointer\b",
    "growth": r"\bgrow\w*|\bdoubl\w*|\bresiz\w*|\brealloc\w*|\btwice (?:the size|as large)\b",
    "copy": r"\bmemcpy\b|\bcop(?:y|ies|ying|ied)\b|\bclon(?:e|es|ed|ing)\b",
    "zeroing": r"\bzero(?:e[sd]|ing)\b|\bclear(?:s|ed|ing)?\b|\bmemset\b|\bcalloc\b",
    "numa": r"\bnuma\b|\bfirst[- ]touch\w*|\bremote (?:memory|node|socket)\b|\bpage faults?\b|\binterleav\w*",
    # threads
    "lock": r"\block(?:s|ed|ing)?\b|\bmutex\w*|\bfutex\w*|\bspinlock\w*|\bseriali[sz]\w*",
    "contention": r"\bcontention\b|\bcontend\w*|\bcas\b|\batomic\w*|\bfetch add\b|\bxadd\b|\bcache lines?\b|"
                  r"\bbounc\w*|\bfalse sharing\b|\bping-?pong\w*|\b\d+-byte (?:cache )?lines?\b|\bc2c\b",
    "spin": r"\bspin(?:s|ning)?\b|\bbusy[- ]wait\w*|\bpoll(?:s|ing|ed)?\b|\byield\w*|\bbarrier\w*",
    "smt": r"\bsmt\b|\bhyper-?threads?\b|\bsiblings?\b|\bhardware threads?\b",
    "steal": r"\bsteal\w*|\bwork[- ]stealing\b", "granularity": r"\bgranularity\b|\bsplit\w*|\bchunk\w*",
    # GPU kernels: each a different bottleneck of the same kernel
    "launch": r"\blaunch(?:es|ing)?\b|\bdispatch(?:es)?\b|\bcommand buffers?\b|\bkernel boundar\w*",
    "host_sync": r"\bround[- ]trips?\b|\bsynchroni[sz]\w*|\bwaituntilcompleted\b|\bcudadevicesynchronize\b|"
                 r"\bcudamemcpy\b|\bback (?:to|on|from) the (?:host|cpu)\b|\bgaps? between\b",
    "occupancy": r"\bregisters? (?:per thread|pressure|count)\b|\bspill\w*|\boccupancy\b|\blocal[- ]memory\b",
    "coalescing": r"\bcoalesc\w*|\bsectors?\b|\bstrided\b|\bscattered\b|\bbandwidth\b|\bcache miss\w*",
    "divergence": r"\bdiverg\w*|\bbranch efficiency\b|\blanes?\b",
    # dispatch
    "dispatch": r"\bindirect (?:call|branch)\w*|\bfunction pointers?\b|\bop table\b|\bmispredict\w*|"
                r"\bbranch predictor\b|\bthrough the pointer\b",
}
_PATTERNS = {name: re.compile(pattern) for name, pattern in MECHANISMS.items()}
# How a kernel was started ("launched through `cudaLaunchCooperativeKernel`") names the driver call every
# report of that kernel names; it says nothing of what costs.
_STARTED = re.compile(r"\blaunched (?:through|with|by|via)\s+\w+")
_SNAKE = re.compile(r"(?<=[a-z0-9])_(?=[a-z0-9])")


def readable(text: str) -> str:
    """Lowercased, code spans unquoted and snake_case names split into words, the driver call blanked; each
    character stays where it was, so a match is quoted from the text as written."""
    text = _SNAKE.sub(" ", text.lower().replace("`", " ").replace("\n", " "))
    return _STARTED.sub(lambda m: " " * len(m.group(0)), text)


def mechanisms(text: str) -> frozenset[str]:
    """The mechanism families a text speaks of."""
    plain = readable(text)
    return frozenset(name for name, pattern in _PATTERNS.items() if pattern.search(plain))


def written(name: str, text: str) -> str | None:
    """How `text` itself writes mechanism `name` (the first words that matched), or None."""
    found = _PATTERNS[name].search(readable(text))
    return text[found.start():found.end()] if found else None


def relation(a: frozenset[str], b: frozenset[str]) -> str:
    """"same" when two root causes describe one mechanism (two or more families, most of them shared),
    "apart" when both describe a mechanism and share none (one kernel's spills and its uncoalesced loads),
    "some" in between, "unknown" when either describes none."""
    if not a or not b:
        return "unknown"
    shared = a & b
    if not shared:
        return "apart"
    alike = len(shared) >= SAME_FAMILIES and len(shared) / len(a | b) >= SAME_SHARE
    return "same" if alike and shared - EVERYDAY else "some"


# Chosen on the training sets (tests/data/dedup, tests/data/dedup_tune) only: one shared family ("alloc")
# is common to causes that differ; two, most of what each describes, is one mechanism.
SAME_FAMILIES = 2
SAME_SHARE = 0.5
# What every root cause of an interaction-net runtime speaks of, whatever it blames: sharing only these says
# little. A bottleneck family (a lock, a launch, growth by copying) must be among the shared ones.
EVERYDAY = frozenset({"dup", "ope", "era", "ref", "u24", "scrutinee", "alloc", "copy"})
