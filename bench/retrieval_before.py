"""The retrieval index as it was before issue 16 (bm25s, one datasketch MinHash per record), for bench/dedup_eval.py.

Kept only so the benchmark can print the old path beside the new one in the same run.

Three signals, each from a structure that scales: BM25 over words (bm25s, sparse matrices), MinHash with
LSH over the shingles of the program's shape (datasketch), and an inverted index of root-cause locations.
A record reaches the candidate list through any of them; the combined score orders the list.
"""
from __future__ import annotations

from collections import defaultdict

import bm25s
from datasketch import MinHash, MinHashLSH

from bot.core.dedup.retrieval import Candidate
from bot.core.dedup.similarity import Features, jaccard

NUM_PERM = 64
LSH_THRESHOLD = 0.3
WEIGHTS = {"text": 0.4, "shape": 0.35, "locations": 0.25}
# A place named by more than this share of records (e.g. "alloc") says little about a pair; past a few
# hundred records a place is also too common to pull candidates in by itself.
COMMON_LOCATION_SHARE = 0.2
MAX_LOCATION_FANOUT = 200


def _minhash(shingles: frozenset[str]) -> MinHash:
    mh = MinHash(num_perm=NUM_PERM, seed=7)
    mh.update_batch([s.encode("utf-8") for s in sorted(shingles)])
    return mh


class RetrievalIndex:
    """An index over existing records' features; `candidates()` answers for a new report."""

    def __init__(self, docs: list[Features]) -> None:
        self.docs = {d.slug: d for d in docs}
        self.word_sets = {d.slug: frozenset(d.words) for d in docs}
        self.order = [d.slug for d in docs]
        self.bm25 = bm25s.BM25()
        if docs:
            self.bm25.index([list(d.words) or ["_empty_"] for d in docs], show_progress=False)
        self.lsh = MinHashLSH(threshold=LSH_THRESHOLD, num_perm=NUM_PERM)
        self.hashes: dict[str, MinHash] = {}
        for doc in docs:
            if doc.shingles:
                self.hashes[doc.slug] = _minhash(doc.shingles)
                self.lsh.insert(doc.slug, self.hashes[doc.slug])
        self.by_location: dict[str, set[str]] = defaultdict(set)
        for doc in docs:
            for location in doc.locations:
                self.by_location[location].add(doc.slug)
        limit = max(2, min(int(len(docs) * COMMON_LOCATION_SHARE), MAX_LOCATION_FANOUT))
        self.rare = {loc for loc, slugs in self.by_location.items() if len(slugs) <= limit}

    def __len__(self) -> int:
        return len(self.order)

    def candidates(self, query: Features, k: int = 5) -> list[Candidate]:
        if not self.order:
            return []
        text = self._text_scores(query, k * 4)
        query_hash = _minhash(query.shingles) if query.shingles else None
        shape_hits = set(self.lsh.query(query_hash)) if query_hash is not None else set()
        wanted = query.locations & self.rare
        location_hits = {slug for loc in wanted for slug in self.by_location.get(loc, ())}
        pool = (set(text) | shape_hits | location_hits) - {query.slug}
        found = [self._score(query, slug, text.get(slug, 0.0), query_hash, wanted) for slug in pool]
        found.sort(key=lambda c: (-c.score, c.slug))
        return found[:k]

    def _text_scores(self, query: Features, k: int) -> dict[str, float]:
        """BM25 scores scaled to the best one, so they combine with the [0, 1] similarities."""
        if not query.words:
            return {}
        indices, scores = self.bm25.retrieve([list(query.words)], k=min(k, len(self.order)), show_progress=False)
        best = float(scores[0][0]) if len(scores[0]) else 0.0
        if best <= 0:
            return {}
        return {self.order[int(i)]: float(s) / best for i, s in zip(indices[0], scores[0], strict=True) if s > 0}

    def _score(self, query: Features, slug: str, bm25: float, query_hash, wanted: frozenset[str]) -> Candidate:
        doc = self.docs[slug]
        # BM25 relative to the best hit ranks well but is 1.0 for the best hit even when nothing matches;
        # the overlap of the two word sets puts it on an absolute scale.
        text = bm25 * min(1.0, 2 * jaccard(frozenset(query.words), self.word_sets[slug]))
        shape = query_hash.jaccard(self.hashes[slug]) if query_hash is not None and slug in self.hashes else 0.0
        shared = wanted & doc.locations
        place = jaccard(wanted, doc.locations & self.rare) if wanted else 0.0
        score = WEIGHTS["text"] * text + WEIGHTS["shape"] * shape + WEIGHTS["locations"] * place
        reasons = []
        if text >= 0.4:
            reasons.append(f"similar words (text score {text:.2f})")
        if shape >= LSH_THRESHOLD:
            reasons.append(f"reproduction code of the same shape (MinHash Jaccard {shape:.2f})")
        if shared:
            reasons.append("same root-cause places: " + ", ".join(sorted(loc.split(":", 1)[1] for loc in shared)))
        return Candidate(slug, round(score, 4), round(text, 4), round(shape, 4), round(place, 4), tuple(reasons))
