"""Dedup answers an agent can act on (issue 42): confidences that separate overlaps from hard negatives on the
training sets, reasons true of both texts, merged drafts within the prose budget, machines shared by retrieval."""
from __future__ import annotations

import re
import statistics

import pytest

from bot.core.dedup.confidence import FEATURES, WEIGHTS, PairFeatures, fit, overlap_probability
from bot.core.dedup.merge_text import merge_reports
from bot.core.dedup.offline_reviewer import OfflineReviewer
from bot.core.dedup.similarity import features
from bot.core.reports.parse import parse
from tests.dedup.test_dedup_heldout import dedup_eval
from tests.reports import canonical_report

TRAINING = dedup_eval.TRAINING


@pytest.fixture(scope="module")
def judged():
    reviewer = OfflineReviewer()
    rows = []
    for name in TRAINING:
        for new, old, candidate, label in dedup_eval.judged_pairs(*dedup_eval.load_set(dedup_eval.SETS[name])):
            rows.append((new, old, candidate, label, reviewer.review(new, old, candidate)))
    return rows


def test_the_weights_are_what_the_training_sets_fit():
    assert dedup_eval.fit_confidence() == pytest.approx(WEIGHTS, abs=1e-3)
    assert len(WEIGHTS) == len(FEATURES) + 1


def test_confidence_separates_true_overlaps_from_hard_negatives_on_the_training_sets():
    for name in TRAINING:
        result = dedup_eval.evaluate(*dedup_eval.load_set(dedup_eval.SETS[name]))
        assert statistics.median(result["p_true"]) >= 0.75, result["p_true"]
        assert max(result["p_hard"]) < 0.5, result["p_hard"]


def test_a_verdict_states_how_likely_it_is_and_overlaps_rank_above_distinct_pairs(judged):
    overlapping = [v.confidence for *_, label, v in judged if label and v.overlapping]
    distinct = [1 - v.confidence for *_, label, v in judged if not label and not v.overlapping]
    assert all(0 <= v.confidence <= 1 for *_, v in judged)
    assert statistics.median(overlapping) > 0.75 > 0.25 > statistics.median(distinct)


def test_fit_learns_a_separable_toy_set():
    rows = [(PairFeatures(t, 0, 0, p, w, 0), True) for t, p, w in ((0.3, 1, 0.4), (0.2, 1, 0.3), (0.4, 0.5, 0.5))]
    rows += [(PairFeatures(t, 1, 0, p, w, 0), False) for t, p, w in ((0.1, 0, 0.1), (0.05, 0, 0.05), (0.1, 0.2, 0))]
    weights = fit(rows)
    assert all(overlap_probability(f, weights) > 0.5 for f, label in rows if label)
    assert all(overlap_probability(f, weights) < 0.5 for f, label in rows if not label)


def _text(record) -> str:
    return " ".join([record.title, *(s.text for s in record.sections)]).lower()


def test_every_reason_names_only_what_both_reports_contain(judged):
    for new, old, candidate, _, verdict in judged:
        both = (_text(new), _text(old))
        for reason in verdict.reasons:
            for name in re.findall(r"`([^`]+)`", reason):
                if name in (new.slug, old.slug):
                    continue
                assert all(name.lower() in text for text in both), (reason, new.slug, old.slug)
            words = re.match(r"words both use in title, context and root cause: (.*) \(text score", reason)
            if words:
                shared = set(features(new).words) & set(features(old).words)
                assert set(words.group(1).split(" and ")[0].split(", ")) <= shared, reason
            assert not (reason.startswith("no word") and candidate.text > 0), (reason, candidate)


def test_concepts_are_quoted_in_each_reports_own_words():
    heap = canonical_report("perf_a", root_cause="Every cons goes through the heap lock in `alloc_node`.")
    alloc = canonical_report("perf_b", root_cause="Allocation of each cell takes the global lock in `alloc_node`.")
    a, b = (parse(f"devs/issues/{s}.md", t.encode()).record for s, t in (("perf_a", heap), ("perf_b", alloc)))
    from bot.core.dedup.reasons import shared_places_reason

    reason = shared_places_reason(a, b)
    assert "`alloc_node`" in reason and "'heap' in perf_a, 'Allocation' in perf_b" in reason


def test_merged_drafts_fit_the_prose_budget():
    long = "The interpreter walks every node again. " * 30  # 180 words: each report is within the budget
    new = parse("devs/issues/perf_n.md", canonical_report("perf_n", root_cause=long, extra_prose=long).encode()).record
    old = parse("devs/issues/perf_o.md", canonical_report("perf_o", root_cause=long + " More.", extra_prose=long
                                                          + " Also.").replace("def sum", "def total").encode()).record
    assert new.prose_words <= 500 and old.prose_words <= 500
    merged = merge_reports(new, old)
    record = parse("devs/issues/perf_n.md", merged.encode()).record
    assert record.prose_words <= 500, record.prose_words
    assert "def total" in merged and "def sum" in merged  # both programs kept: code is free
    assert "supersedes: [perf_o]" in merged


def test_reports_measured_on_one_machine_share_a_retrieval_word():
    record = parse("devs/issues/perf_m.md", canonical_report("perf_m").encode()).record
    machine = next(m.machine for m in record.measurements if m.machine)
    assert f"machine_{re.sub('[^a-z0-9]+', '_', machine.lower())}" in features(record).words


def test_the_merge_plan_deletes_each_old_file_and_carries_a_fix_the_draft_lacks():
    from bot.core.dedup.merge_plan import merge_plan

    draft = parse("devs/issues/perf_new.md", canonical_report("perf_new").encode()).record
    fixed = parse("devs/issues/perf_old.md", canonical_report("perf_old", fix="fix/perf_old-share").encode()).record
    other = parse("devs/issues/perf_other.md", canonical_report("perf_other", supersedes=()).encode()).record
    plan = merge_plan(draft, [fixed, other, draft])
    assert plan.delete == ("devs/issues/perf_old.md", "devs/issues/perf_other.md")
    assert plan.write == "devs/issues/perf_new.md" and plan.supersedes == ("perf_old", "perf_other")
    assert any("fix: fix/perf_old-share" in item for item in plan.must_cover)
    assert not any("`perf_other`'s fix" in item for item in plan.must_cover)  # it has none to carry
    assert any("supersedes: [perf_old, perf_other]" in item for item in plan.must_cover)
