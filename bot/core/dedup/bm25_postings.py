"""BM25 over an inverted index that takes and drops documents one at a time.

The scoring is bm25s's default ("lucene": idf = ln(1 + (N - df + 0.5) / (df + 0.5)), k1 1.5, b 0.75, a
document without words counted as one word long). bm25s precomputes each posting's score for a fixed corpus
and cannot add or remove a document; here the postings keep only term frequencies and a query computes
idf and length normalisation from the current counts, so an index changed document by document scores
exactly like one built from scratch over the same documents.
"""
from __future__ import annotations

import math
from collections import Counter, defaultdict
from itertools import chain

import numpy as np

K1 = 1.5
B = 0.75
_GROW = 1.5
_NO_SLOTS = np.zeros(0, dtype=np.int32)  # shared by every empty term: never written, only replaced
_NO_TFS = np.zeros(0, dtype=np.float32)


class Bm25Postings:
    """Postings per term (document slots and term frequencies); slots are small integers the caller owns."""

    def __init__(self) -> None:
        self.vocab: dict[str, int] = {}
        self._slots: list[np.ndarray] = []  # per term: a buffer of slots, the first _used[term] of them live
        self._tfs: list[np.ndarray] = []
        self._lens: list[np.ndarray] = []  # the document's length beside each posting: no gather at query time
        self._used: list[int] = []
        self.doc_terms: dict[int, np.ndarray] = {}  # slot -> its distinct term ids, sorted
        self.lengths = np.zeros(0, dtype=np.float64)
        self.total_length = 0
        self.count = 0

    def _term_ids(self, words: tuple[str, ...]) -> Counter[int]:
        vocab = self.vocab
        counts = Counter(words)
        ids: Counter[int] = Counter()
        for word, tf in counts.items():
            term = vocab.get(word)
            if term is None:
                term = vocab[word] = len(vocab)
                self._slots.append(_NO_SLOTS)
                self._tfs.append(_NO_TFS)
                self._lens.append(_NO_TFS)
                self._used.append(0)
            ids[term] = tf
        return ids

    def _room(self, capacity: int) -> None:
        if capacity > len(self.lengths):
            grown = np.zeros(max(capacity, int(len(self.lengths) * _GROW) + 16), dtype=np.float64)
            grown[:len(self.lengths)] = self.lengths
            self.lengths = grown

    def _note(self, slot: int, words: tuple[str, ...], terms: np.ndarray) -> None:
        self.doc_terms[slot] = terms
        self.lengths[slot] = len(words) or 1  # as bm25s, which indexes an empty document as one token
        self.total_length += len(words) or 1
        self.count += 1

    def build(self, slots: list[int], docs: list[tuple[str, ...]]) -> None:
        """Many documents at once into an empty index: term ids by one dict pass, postings by two numpy sorts."""
        self._room(max(slots, default=-1) + 1)
        flat = list(chain.from_iterable(docs))
        numbering = defaultdict(None, self.vocab)
        numbering.default_factory = numbering.__len__  # a new word gets the next id, without a Python-level call
        term_ids = np.fromiter(map(numbering.__getitem__, flat), dtype=np.int64, count=len(flat))
        self.vocab = dict(numbering)
        grown = len(self.vocab) - len(self._used)
        self._slots += [_NO_SLOTS] * grown
        self._tfs += [_NO_TFS] * grown
        self._lens += [_NO_TFS] * grown
        self._used += [0] * grown
        width = max(len(self.vocab), 1)
        lengths = np.fromiter(map(len, docs), dtype=np.int64, count=len(docs))
        owners = np.repeat(np.asarray(slots, dtype=np.int64), lengths)
        keys = owners * width + term_ids
        pairs, tfs = np.unique(keys, return_counts=True)  # sorted by slot, then term
        pair_slots, pair_terms = (pairs // width).astype(np.int32), (pairs % width).astype(np.int32)
        bounds = np.searchsorted(pair_slots, np.asarray(slots, dtype=np.int32))
        ends = np.searchsorted(pair_slots, np.asarray(slots, dtype=np.int32), side="right")
        for slot, words, lo, hi in zip(slots, docs, bounds.tolist(), ends.tolist(), strict=True):
            self._note(slot, words, pair_terms[lo:hi])
        order = np.argsort(pair_terms, kind="stable")
        by_term, by_slot, by_tf = pair_terms[order], pair_slots[order], tfs[order].astype(np.float32)
        by_len = self.lengths[by_slot].astype(np.float32)
        edges = np.searchsorted(by_term, np.arange(len(self.vocab) + 1)).tolist()
        for term in np.unique(by_term).tolist():
            lo, hi = edges[term], edges[term + 1]
            self._slots[term], self._tfs[term] = by_slot[lo:hi].copy(), by_tf[lo:hi].copy()
            self._lens[term], self._used[term] = by_len[lo:hi].copy(), hi - lo

    def add(self, slot: int, words: tuple[str, ...]) -> None:
        self._room(slot + 1)
        ids = self._term_ids(words)
        length = len(words) or 1
        for term, tf in ids.items():
            used = self._used[term]
            if used == len(self._slots[term]):
                size = int(used * _GROW) + 4
                self._slots[term] = np.resize(self._slots[term], size)
                self._tfs[term] = np.resize(self._tfs[term], size)
                self._lens[term] = np.resize(self._lens[term], size)
            self._slots[term][used] = slot
            self._tfs[term][used] = tf
            self._lens[term][used] = length
            self._used[term] = used + 1
        self._note(slot, words, np.sort(np.fromiter(ids.keys(), dtype=np.int32, count=len(ids))))

    def remove(self, slot: int) -> None:
        for term in self.doc_terms.pop(slot).tolist():
            used = self._used[term]
            slots, tfs, lens = self._slots[term], self._tfs[term], self._lens[term]
            at = int(np.flatnonzero(slots[:used] == slot)[0])
            # Order within a term's postings never matters: each document is there once.
            slots[at], tfs[at], lens[at] = slots[used - 1], tfs[used - 1], lens[used - 1]
            self._used[term] = used - 1
        self.total_length -= int(self.lengths[slot])
        self.lengths[slot] = 0
        self.count -= 1

    def query_terms(self, words: tuple[str, ...]) -> dict[int, int]:
        """The query's known term ids with their multiplicity (bm25s scores a repeated query word again)."""
        ids: dict[int, int] = {}
        for word in words:
            term = self.vocab.get(word)
            if term is not None:
                ids[term] = ids.get(term, 0) + 1
        return ids

    def scores(self, words: tuple[str, ...]) -> np.ndarray:
        """A BM25 score for every slot (0 for slots without a shared word or without a document)."""
        if not self.count:
            return np.zeros(len(self.lengths))
        n = self.count
        slots, tfs, lens, idfs, sizes = [], [], [], [], []
        for term, times in self.query_terms(words).items():
            used = self._used[term]
            if used:
                slots.append(self._slots[term][:used])
                tfs.append(self._tfs[term][:used])
                lens.append(self._lens[term][:used])
                idfs.append(times * math.log(1 + (n - used + 0.5) / (used + 0.5)))
                sizes.append(used)
        if not slots:
            return np.zeros(len(self.lengths))
        tf, length = np.concatenate(tfs), np.concatenate(lens)
        # tf / (tf + k1 * (1 - b + b * dl / avgdl)), with the two constants of this query folded first
        weights = tf / (tf + np.float32(K1 * (1 - B)) + np.float32(K1 * B / (self.total_length / n)) * length)
        weights = weights * np.repeat(np.asarray(idfs, dtype=np.float32), sizes)
        # One pass in term order: a document's sum runs over the query's terms in the same order however the
        # postings were laid out, so an index built incrementally gives bit-for-bit the same scores.
        return np.bincount(np.concatenate(slots), weights=weights, minlength=len(self.lengths))
