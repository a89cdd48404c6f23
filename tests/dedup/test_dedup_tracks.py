"""The offline reviewer weighs track and backend: a shared program across claims is not a shared cause."""
from __future__ import annotations

from bot.core.dedup.offline_reviewer import review
from bot.core.dedup.retrieval import RetrievalIndex
from bot.core.dedup.similarity import features
from bot.core.reports.parse import parse
from tests.reports import canonical_report

RADIX = "the radix sort of `bench/sort/radix.bend`"


def record(slug: str, cause: str, **kw):
    text = canonical_report(slug, title=f"Radix sort is slow ({slug})", root_cause=cause, **kw)
    return parse(f"devs/issues/{slug}.md", text.encode()).record


def verdict(new, old):
    index = RetrievalIndex([features(old)])
    scores = next(c for c in index.candidates(features(new), k=1) if c.slug == old.slug)
    return review(new, old, scores)


SEQ_LIST = ("In " + RADIX + ", `list_append` in `runtime/c/list.c` rebuilds the bucket list on every push: "
            "each append copies the spine, so the buckets cost quadratic allocation.")
METAL_LOWERING = ("In " + RADIX + ", the Metal lowering in `runtime/metal/lower.metal: lower_match` turns the "
                  "digit switch into a chain of divergent branches, so each SIMD group serialises its lanes.")
SEQ_ALLOC = ("`alloc_node` in `runtime/c/heap.c` takes a global lock for every node of the bucket lists, "
             "and the lock's cache line bounces on every allocation.")
METAL_ALLOC = ("`alloc_node` in `runtime/metal/heap.metal` takes a global atomic for every node of the bucket "
               "lists, and that cache line bounces on every allocation.")


def test_a_seq_list_report_and_a_metal_lowering_report_on_one_program_are_distinct():
    old = record("perf_radix_list_append", SEQ_LIST)
    new = record("perf_radix_metal_lowering", METAL_LOWERING, track="par", backend="metal", threads=8, ratio=4.0)
    found = verdict(new, old)
    assert found.kind == "distinct"
    assert any("par/metal vs seq/c" in reason and "no shared root-cause mechanism" in reason
               for reason in found.reasons), found.reasons


def test_across_backends_one_mechanism_still_overlaps_and_the_reasons_name_it():
    old = record("perf_radix_alloc_c", SEQ_ALLOC, track="par", backend="c", threads=8, ratio=4.0)
    new = record("perf_radix_alloc_metal", METAL_ALLOC, track="par", backend="metal", threads=8, ratio=4.0)
    found = verdict(new, old)
    assert found.kind in ("duplicate", "overlaps"), found.reasons
    assert any("par/metal vs par/c" in reason and "`alloc_node`" in reason for reason in found.reasons), found.reasons


def test_the_same_claim_names_its_mechanism_too():
    old = record("perf_radix_alloc_a", SEQ_ALLOC, track="par", backend="c", threads=8, ratio=4.0)
    new = record("perf_radix_alloc_b", SEQ_ALLOC + " Same at 16 threads.", track="par", backend="c", threads=8,
                 ratio=4.0)
    found = verdict(new, old)
    assert found.kind in ("duplicate", "overlaps")
    assert any(reason.startswith("root-cause mechanism: places `alloc_node`") for reason in found.reasons)
