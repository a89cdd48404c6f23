"""The retrieval index changed record by record answers exactly like one built from scratch, and its parts
agree with the libraries whose scoring they keep (datasketch's MinHash, bm25s's BM25)."""
from __future__ import annotations

import json
import random
from pathlib import Path

import bm25s
import numpy as np
import pytest
from datasketch import MinHash, MinHashLSH
from hypothesis import given, settings
from hypothesis import strategies as st

from bot.core.dedup.bm25_postings import Bm25Postings
from bot.core.dedup.retrieval import RetrievalIndex
from bot.core.dedup.shape_signature import NUM_PERM, band_split, signatures
from bot.core.dedup.similarity import Features, features
from bot.core.reports.parse import parse

DATA = Path(__file__).resolve().parents[1] / "data" / "dedup"


@pytest.fixture(scope="module")
def labelled() -> list[Features]:
    paths = sorted((DATA / "devs" / "issues").glob("perf_*.md"))
    return [features(parse(f"devs/issues/{p.name}", p.read_bytes()).record) for p in paths]


def variant(base: list[Features], slug: str, rng: random.Random) -> Features:
    """A record recombined from the labelled set: some of one report's words, shingles and places, some of others'."""
    seed, other = rng.choice(base), rng.choice(base)
    if rng.random() < 0.05:  # records without words, code or places exist (a draft, a prose-only report)
        return Features(slug, (), frozenset(), frozenset())
    words = [w for w in seed.words if rng.random() < 0.7] + rng.sample(other.words, min(10, len(other.words)))
    shingles = {s for s in seed.shingles if rng.random() < 0.6} | set(list(other.shingles)[:5])
    places = {p for p in seed.locations | other.locations if rng.random() < 0.5}
    return Features(slug, tuple(words), frozenset(shingles), frozenset(places))


def assert_same_answers(index: RetrievalIndex, live: dict[str, Features], queries: list[Features]) -> None:
    fresh = RetrievalIndex(list(live.values()))
    assert len(index) == len(fresh) == len(live)
    for query in queries:
        for k in (1, 5, 12):
            assert index.candidates(query, k) == fresh.candidates(query, k), (query.slug, k)


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), start=st.integers(0, 60), steps=st.integers(1, 80))
def test_add_replace_remove_answer_as_a_fresh_build(labelled, seed, start, steps):
    rng = random.Random(seed)
    live = {f"perf_g{i}": variant(labelled, f"perf_g{i}", rng) for i in range(start)}
    index = RetrievalIndex(list(live.values()))
    for step in range(steps):
        action = rng.random()
        if action < 0.3 and live:
            slug = rng.choice(sorted(live))
            index.remove(slug)
            del live[slug]
        elif action < 0.6 and live:  # the same slug with new content: a report edited by a push
            slug = rng.choice(sorted(live))
            live[slug] = variant(labelled, slug, rng)
            index.add(live[slug])
        else:
            slug = f"perf_n{step}"
            live[slug] = variant(labelled, slug, rng)
            index.add(live[slug])
    queries = rng.sample(labelled, 6) + rng.sample(sorted(live.values(), key=lambda f: f.slug), min(4, len(live)))
    assert_same_answers(index, live, queries)


def test_an_index_emptied_and_refilled_answers_as_a_fresh_build(labelled):
    index = RetrievalIndex(labelled)
    for doc in labelled:
        index.remove(doc.slug)
    assert len(index) == 0 and index.candidates(labelled[0]) == []
    for doc in reversed(labelled):  # other slots than the build gave them
        index.add(doc)
    assert_same_answers(index, {d.slug: d for d in labelled}, labelled)


def test_signatures_are_datasketchs_minhash(labelled):
    sets = [d.shingles for d in labelled] + [frozenset(), frozenset({"ID = NUM"})]
    for shingles, row in zip(sets, signatures(sets), strict=True):
        expected = MinHash(num_perm=64, seed=7)
        expected.update_batch([s.encode("utf-8") for s in shingles])
        assert np.array_equal(expected.hashvalues, row)


@pytest.mark.parametrize("threshold", [0.05, 0.1, 0.2, 0.3, 0.35, 0.5, 0.65, 0.8, 0.95])
def test_band_split_is_datasketchs(threshold):
    lsh = MinHashLSH(threshold=threshold, num_perm=NUM_PERM)
    assert band_split(threshold, NUM_PERM) == (lsh.b, lsh.r)


def test_bm25_scores_are_bm25s_scores(labelled):
    docs = [d.words for d in labelled] + [()]
    ours = Bm25Postings()
    ours.build(list(range(len(docs))), docs)
    theirs = bm25s.BM25()
    theirs.index([list(words) or ["_empty_"] for words in docs], show_progress=False)
    for query in labelled[:20]:
        expected = theirs.get_scores([w for w in query.words if w in theirs.vocab_dict] or [""])
        assert np.allclose(ours.scores(query.words), expected, rtol=1e-5, atol=1e-6)


def test_the_labelled_sets_pairs_are_found_as_before(labelled):
    """The recall docs/benchmarks.md reports: every labelled overlapping pair in the top 5 of one side or the other."""
    index = RetrievalIndex(labelled)
    pairs = [p for p in json.loads((DATA / "pairs.json").read_text())
             if p["label"] in {"duplicate", "subsumes", "overlaps"}]
    by_slug = {d.slug: d for d in labelled}
    tops = {slug: [c.slug for c in index.candidates(by_slug[slug], 5)] for slug in by_slug}
    found = sum((p["b"] in tops[p["a"]]) + (p["a"] in tops[p["b"]]) for p in pairs) / 2
    assert found / len(pairs) >= 0.94
