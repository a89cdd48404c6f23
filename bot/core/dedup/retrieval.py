"""Retrieval: rank every existing record against a new one cheaply and keep a few scored candidates.

Three signals, each from a structure that scales: BM25 over words (core/dedup/bm25_postings.py), MinHash with
LSH over the shingles of the program's shape (core/dedup/shape_signature.py, datasketch's signatures and bands),
and an inverted index of root-cause locations. A record reaches the candidate list through any of them; the
combined score orders the list. Every structure takes, replaces and drops one record without a rebuild, and
an index changed that way answers exactly as one built from scratch over the same records.
"""
from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np

from bot.core.dedup.bm25_postings import Bm25Postings
from bot.core.dedup.shape_signature import NUM_PERM, BandTables, agreement, signatures
from bot.core.dedup.similarity import Features, jaccard

LSH_THRESHOLD = 0.3
WEIGHTS = {"text": 0.4, "shape": 0.35, "locations": 0.25}
# A place named by more than this share of records (e.g. "alloc") says little about a pair; past a few
# hundred records a place is also too common to pull candidates in by itself.
COMMON_LOCATION_SHARE = 0.2
MAX_LOCATION_FANOUT = 200


@dataclass(frozen=True)
class Candidate:
    slug: str
    score: float
    text: float
    shape: float
    locations: float
    reasons: tuple[str, ...]


class RetrievalIndex:
    """An index over existing records' features; `candidates()` answers for a new report, `add()` and
    `remove()` change it one record at a time (each record has a slot; freed slots are reused)."""

    def __init__(self, docs: Sequence[Features] = ()) -> None:
        self.slot_of: dict[str, int] = {}
        self.slugs: list[str | None] = []
        self.free: list[int] = []
        self.words = Bm25Postings()
        self.bands = BandTables(LSH_THRESHOLD)
        self.sigs = np.zeros((0, NUM_PERM), dtype=np.uint32)
        self.has_shape = np.zeros(0, dtype=bool)
        self.places: list[frozenset[str]] = []
        self.by_location: dict[str, set[int]] = defaultdict(set)
        docs = list({d.slug: d for d in docs}.values())
        if docs:
            self._build(docs)

    def _build(self, docs: list[Features]) -> None:
        self.slugs = [d.slug for d in docs]
        self.slot_of = {slug: slot for slot, slug in enumerate(self.slugs) if slug is not None}
        slots = list(range(len(docs)))
        self.words.build(slots, [d.words for d in docs])
        self.sigs = signatures([d.shingles for d in docs])
        self.has_shape = np.fromiter((bool(d.shingles) for d in docs), dtype=bool, count=len(docs))
        shaped = np.flatnonzero(self.has_shape)
        self.bands.add(shaped.tolist(), self.sigs[shaped])
        self.places = [d.locations for d in docs]
        for slot, doc in enumerate(docs):
            for location in doc.locations:
                self.by_location[location].add(slot)

    def __len__(self) -> int:
        return len(self.slot_of)

    def __contains__(self, slug: str) -> bool:
        return slug in self.slot_of

    def add(self, doc: Features) -> None:
        """Index `doc`, replacing the record of the same slug if there is one."""
        if doc.slug in self.slot_of:
            self.remove(doc.slug)
        slot = self.free.pop() if self.free else len(self.slugs)
        if slot == len(self.slugs):
            self.slugs.append(None)
            self.places.append(frozenset())
            if slot >= len(self.sigs):
                size = max(16, int(len(self.sigs) * 1.5))
                self.sigs = np.resize(self.sigs, (size, self.sigs.shape[1]))
                self.has_shape = np.resize(self.has_shape, size)
        self.slugs[slot], self.slot_of[doc.slug] = doc.slug, slot
        self.words.add(slot, doc.words)
        self.sigs[slot] = signatures([doc.shingles])[0]
        self.has_shape[slot] = bool(doc.shingles)
        if doc.shingles:
            self.bands.add([slot], self.sigs[slot:slot + 1])
        self.places[slot] = doc.locations
        for location in doc.locations:
            self.by_location[location].add(slot)

    def remove(self, slug: str) -> None:
        slot = self.slot_of.pop(slug)
        self.words.remove(slot)
        if self.has_shape[slot]:
            self.bands.remove(slot, self.sigs[slot])
        self.has_shape[slot] = False
        for location in self.places[slot]:
            holders = self.by_location[location]
            holders.discard(slot)
            if not holders:
                del self.by_location[location]
        self.places[slot] = frozenset()
        self.slugs[slot] = None
        self.free.append(slot)

    def candidates(self, query: Features, k: int = 5) -> list[Candidate]:
        if not self.slot_of:
            return []
        text = self._text_scores(query, k * 4)
        query_sig = signatures([query.shingles])[0] if query.shingles else None
        shape_hits = self.bands.query(query_sig) if query_sig is not None else set()
        limit = max(2, min(int(len(self) * COMMON_LOCATION_SHARE), MAX_LOCATION_FANOUT))
        rare = {loc for loc in query.locations if len(self.by_location.get(loc, ())) <= limit}
        wanted = frozenset(loc for loc in rare if loc in self.by_location)
        location_hits = {slot for loc in wanted for slot in self.by_location[loc]}
        itself = self.slot_of.get(query.slug, -1)
        text.pop(itself, None)
        # The few BM25 hits first, so their text scores go in by position; the shape and place hits after.
        rest = (shape_hits | location_hits).difference(text, {itself})
        if not text and not rest:
            return []
        slots = np.concatenate([np.fromiter(text, dtype=np.int64, count=len(text)),
                                np.fromiter(rest, dtype=np.int64, count=len(rest))])
        text_part = np.zeros(len(slots))
        text_part[:len(text)] = list(text.values())
        shape_part = np.zeros(len(slots))
        if query_sig is not None:
            shape_part = agreement(query_sig, self.sigs[slots]) * self.has_shape[slots]
        place_part = np.zeros(len(slots))
        if wanted:
            for i, slot in enumerate(slots.tolist()):
                if slot in location_hits:
                    place_part[i] = jaccard(wanted, frozenset(self._rare_places(slot, limit)))
        score = WEIGHTS["text"] * text_part + WEIGHTS["shape"] * shape_part + WEIGHTS["locations"] * place_part
        rounded = np.round(score, 4)
        keep = np.arange(len(slots))
        if len(slots) > k:  # everything tied with the k-th best stays in, so the slug decides ties
            keep = np.flatnonzero(rounded >= np.partition(rounded, -k)[-k])
        order = sorted(keep.tolist(), key=lambda i: (-rounded[i], self.slugs[slots[i]]))[:k]
        return [self._candidate(int(slots[i]), text_part[i], shape_part[i], place_part[i], score[i], wanted)
                for i in order]

    def _rare_places(self, slot: int, limit: int) -> Iterator[str]:
        return (loc for loc in self.places[slot] if len(self.by_location[loc]) <= limit)

    def _text_scores(self, query: Features, k: int) -> dict[int, float]:
        """BM25 of the k best, scaled to the best one and put on an absolute scale by the word overlap."""
        if not query.words:
            return {}
        scores = self.words.scores(query.words)
        positive = np.flatnonzero(scores > 0)
        if not len(positive):
            return {}
        if len(positive) > k:
            positive = positive[scores[positive] >= np.partition(scores[positive], -k)[-k]]
        top = sorted(positive.tolist(), key=lambda slot: (-scores[slot], self.slugs[slot]))[:k]
        best = float(scores[top[0]])
        query_words = frozenset(query.words)
        query_terms = np.fromiter(sorted(self.words.query_terms(tuple(query_words))), dtype=np.int32)
        out = {}
        for slot in top:
            doc_terms = self.words.doc_terms[slot]
            shared = len(np.intersect1d(doc_terms, query_terms, assume_unique=True))
            overlap = shared / (len(query_words) + len(doc_terms) - shared)
            # BM25 relative to the best hit ranks well but is 1.0 for the best hit even when nothing matches;
            # the overlap of the two word sets puts it on an absolute scale.
            out[slot] = float(scores[slot]) / best * min(1.0, 2 * overlap)
        return out

    def _candidate(self, slot: int, text: float, shape: float, place: float, score: float,
                   wanted: frozenset[str]) -> Candidate:
        shared = wanted & self.places[slot]
        reasons = []
        if text >= 0.4:
            reasons.append(f"similar words (text score {text:.2f})")
        if shape >= LSH_THRESHOLD:
            reasons.append(f"reproduction code of the same shape (MinHash Jaccard {shape:.2f})")
        named = sorted(loc.split(":", 1)[1] for loc in shared if not loc.startswith("concept:"))
        concepts = sorted(loc.split(":", 1)[1] for loc in shared if loc.startswith("concept:"))
        if named:  # files and code spans both root causes write as such
            reasons.append("both root causes name " + ", ".join(named))
        if concepts:  # a concept matches different words in each ("heap", "allocation"): named as a kind
            reasons.append("both root causes speak of the same kind of cause: " + ", ".join(concepts))
        slug = self.slugs[slot]
        if slug is None:
            raise ValueError(f"slot {slot} is free: no candidate")  # a freed slot scores nothing
        return Candidate(slug, round(float(score), 4), round(float(text), 4), round(float(shape), 4),
                         round(float(place), 4), tuple(reasons))
