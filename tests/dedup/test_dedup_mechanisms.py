"""Mechanism families (core/dedup/mechanisms.py): one kernel with different bottlenecks is distinct, a mechanism
told in words meets the same one named by function, and the reviewer's reasons hold for both texts."""
from __future__ import annotations

import re

import pytest

from bot.core.dedup.mechanisms import mechanisms, relation, written
from bot.core.dedup.offline_reviewer import OfflineReviewer
from bot.core.dedup.retrieval import RetrievalIndex
from bot.core.dedup.similarity import cause_profile, features
from bot.core.reports.parse import parse
from tests.dedup.test_dedup_heldout import dedup_eval
from tests.reports import canonical_report

KERNEL = "The `gnet_step` kernel (runtime/cuda/gnet.cu), launched through `cudaLaunchCooperativeKernel`, "


def _record(slug: str, cause: str, **front):
    text = canonical_report(slug, title=f"GPU run is slow ({slug})", root_cause=cause, **front)
    return parse(f"devs/issues/{slug}.md", text.encode()).record


def _review(new, old):
    candidate = RetrievalIndex([features(old)]).candidates(features(new), 1)[0]
    return OfflineReviewer().review(new, old, candidate)


def test_how_a_kernel_is_started_is_not_a_launch_cost():
    assert "launch" not in mechanisms(KERNEL + "spills registers to local memory.")
    assert {"launch", "host_sync"} <= mechanisms("It launches the kernel once per step, a round trip each time.")


def test_snake_case_names_are_read_as_words_and_quoted_as_written():
    assert {"growth", "copy"} <= mechanisms("`bag_grow` calls `memcpy` on the whole bag.")
    assert written("growth", "`runtime/c/bag.c: bag_grow` copies") == "grow"
    assert written("growth", "A growable array") == "growable"


def test_one_kernel_with_different_bottlenecks_is_distinct_and_says_which_in_each_reports_words():
    cuda = {"track": "par", "backend": "cuda", "threads": 16384, "ratio": 54}
    spills = _record("perf_spills", KERNEL + "uses 212 registers per thread and spills to local memory, so "
                                             "occupancy is 19%.", **cuda)
    loads = _record("perf_loads", KERNEL + "loads node pairs from scattered addresses: 13% of each sector is "
                                           "used and the kernel is bound by DRAM bandwidth.", **cuda)
    assert relation(cause_profile(spills).mechanisms, cause_profile(loads).mechanisms) == "apart"
    verdict = _review(spills, loads)
    assert verdict.kind == "distinct", verdict.reasons
    said = next(r for r in verdict.reasons if r.startswith("the root causes describe different mechanisms"))
    assert "occupancy ('registers per thread' in perf_spills)" in said and "coalescing (" in said


def test_a_mechanism_told_in_words_overlaps_the_same_one_named_by_function():
    named = _record("perf_named", "`runtime/c/bag.c: bag_push` calls `bag_grow` when the redex bag is full, which "
                                  "allocates a bag twice the size and copies every pending redex with `memcpy`.")
    told = _record("perf_told", "The evaluator keeps pending interactions in one growable array; when it is full "
                                "the runtime reserves one twice as large and copies every interaction across.")
    assert not cause_profile(told).places
    verdict = _review(told, named)
    assert verdict.overlapping, verdict.reasons
    assert any("the same mechanism" in r and "copy" in r and "growth" in r for r in verdict.reasons)


def test_in_one_backends_code_other_functions_are_another_cause_even_with_the_same_families():
    a = _record("perf_a", "`free_node` takes the global lock for every erased node, and all threads contend on it.")
    b = _record("perf_b", "`push_redex` takes the global lock for every new redex, and all threads contend on it.")
    assert relation(cause_profile(a).mechanisms, cause_profile(b).mechanisms) == "same"
    assert not _review(a, b).overlapping


@pytest.fixture(scope="module")
def training_verdicts():
    rows = []
    for name in dedup_eval.TRAINING:
        for new, old, candidate, _label in dedup_eval.judged_pairs(*dedup_eval.load_set(dedup_eval.SETS[name])):
            rows.append((new, old, OfflineReviewer().review(new, old, candidate)))
    return rows


def _text(record) -> str:
    return " ".join([record.title, *(s.text for s in record.sections)]).lower()


def test_every_quoted_word_and_blamed_place_is_in_the_texts_it_is_said_of(training_verdicts):
    """On every pair the reviewer judges in the training sets: "'x' in perf_a" is in perf_a's text, a bare
    'x' in both, and each place "both root causes blame" in both root causes."""
    checked = 0
    for new, old, verdict in training_verdicts:
        texts = {new.slug: _text(new), old.slug: _text(old)}
        causes = [(r.section("root_cause").text if r.section("root_cause") else "").lower() for r in (new, old)]
        for reason in verdict.reasons:
            for word, _, slug in re.findall(r"'([^']+)'( in (perf_\w+))?", reason):
                owners = [texts[slug]] if slug else list(texts.values())
                assert all(word.lower() in text for text in owners), (reason, new.slug, old.slug)
                checked += 1
            blamed = re.match(r"both root causes blame (.*?)(?:, in [^(]*)? \(place overlap", reason)
            for place in blamed.group(1).split(", ") if blamed else ():
                assert all(place.lower() in cause for cause in causes), (reason, new.slug, old.slug)
                checked += 1
    assert checked > 100


def test_merged_drafts_of_every_training_pair_stay_within_the_500_word_budget():
    for name in dedup_eval.TRAINING:
        result = dedup_eval.evaluate(*dedup_eval.load_set(dedup_eval.SETS[name]))
        assert result["merges"] and result["merges_over"] == 0, result


def test_retrieval_lists_every_tuning_overlap_in_the_top_five_even_across_programs_and_backends():
    """The tuning set's agent-style pairs (words against functions, SEQ against PAR, Metal against CUDA) share
    a machine or a mechanism family, not a program: retrieval's mechanism places bring each into the top 5."""
    result = dedup_eval.evaluate(*dedup_eval.load_set(dedup_eval.SETS["tune"]))
    assert result["recall_at_k"][5] == 1.0, result["recall_at_k"]
