"""Reasons for a verdict that are true of both texts: each names what the two reports share, in their words.

Retrieval's own reasons were thresholds on its scores: "no shared words" could sit beside a text score of 0.38
(the words were shared, just under the threshold), and "same root-cause place: alloc" named a concept that
neither report wrote ("heap" in one, "allocation" in the other). Here every word or place a reason names is
found in both reports, and a concept is shown with the words each report used for it.
"""
from __future__ import annotations

import re

from bot.core.dedup.mechanisms import mechanisms, written
from bot.core.dedup.retrieval import LSH_THRESHOLD, Candidate
from bot.core.dedup.similarity import text_words
from bot.core.reports.records import PerfIssue

_SHOWN = 6


def _blame(record: PerfIssue) -> str:
    return " ".join(s.text for s in record.sections if s.name in ("root_cause", "fix"))


def shared_words_reason(new: PerfIssue, old: PerfIssue, scores: Candidate) -> str:
    """The words both use in title, context and root cause, with retrieval's text score."""
    mine, theirs = text_words(new), set(text_words(old))
    shared = list(dict.fromkeys(w for w in mine if w in theirs))
    if not shared:
        return f"no word of title, context or root cause in common (text score {scores.text:.2f})"
    more = f" and {len(shared) - _SHOWN} more" if len(shared) > _SHOWN else ""
    return (f"words both use in title, context and root cause: {', '.join(shared[:_SHOWN])}{more} "
            f"(text score {scores.text:.2f})")


def shape_reason(scores: Candidate) -> str:
    alike = "programs of the same shape" if scores.shape >= LSH_THRESHOLD else "programs of different shape"
    return f"{alike} (MinHash Jaccard {scores.shape:.2f} of their token shingles)"


def shared_places_reason(new: PerfIssue, old: PerfIssue, blamed: frozenset[str] | None = None) -> str | None:
    """Files and functions both root causes (or fixes) name, and the mechanisms both speak of, quoted from each;
    `blamed`, when given, keeps only the mechanisms both root causes blame (not those they rule out)."""
    a, b = _blame(new), _blame(old)
    names = sorted(set(_names(a)) & set(_names(b)))
    shared = mechanisms(a) & mechanisms(b) if blamed is None else blamed
    concepts = [f"{name} ({quoted(name, a, b, new.slug, old.slug)})" for name in sorted(shared)]
    if not names and not concepts:
        return None
    parts = ([f"both name {', '.join(f'`{n}`' for n in names[:_SHOWN])}"] if names else [])
    parts += [f"both speak of {'; '.join(concepts[:4])}"] if concepts else []
    return "root cause and fix: " + "; ".join(parts)


def apart_reason(new: PerfIssue, old: PerfIssue, new_families: frozenset[str], old_families: frozenset[str]) -> str:
    """Different bottlenecks, each named with the words its own root cause used."""
    def said(record: PerfIssue, families: frozenset[str]) -> str:
        text = _blame(record)
        return ", ".join(f"{name} ('{written(name, text)}' in {record.slug})" for name in sorted(families)[:3])
    return (f"the root causes describe different mechanisms: {said(new, new_families)}; "
            f"against {said(old, old_families)}")


def quoted(mechanism: str, a: str, b: str, a_name: str, b_name: str) -> str:
    """A mechanism in the words each text wrote it: "'heap'" or "'heap' in perf_a, 'allocation' in perf_b"."""
    here, there = written(mechanism, a) or "", written(mechanism, b) or ""
    return f"'{here}'" if here.lower() == there.lower() else f"'{here}' in {a_name}, '{there}' in {b_name}"


_FILE = re.compile(r"\b[\w./-]+\.(?:c|h|cu|metal|rs|py)\b")
_SPAN = re.compile(r"`([A-Za-z_][A-Za-z0-9_]{2,})(?:\(\))?`")


def _names(text: str) -> list[str]:
    files = [m.rsplit("/", 1)[-1].lower() for m in _FILE.findall(text)]
    return files + [m for m in _SPAN.findall(text) if "_" in m or m.islower()]


def as_written(stems: list[str], *texts: str) -> list[str]:
    """Mechanism stems ("alloc", "boxe") as the first text wrote them, kept only when every text has them."""
    shown = []
    for stem in stems:
        found = [re.search(rf"\b{re.escape(stem)}\w*", text, re.I) for text in texts]
        if all(found):
            shown.append(found[0].group(0).lower())  # type: ignore[union-attr]
    return list(dict.fromkeys(shown))
