"""The held-out and tuning dedup sets: intact, and the offline reviewer keeps the figures docs/benchmarks.md reports.

bench/dedup_eval.py prints the same figures side by side. The floors below are the measured figures (docs/benchmarks.md,
"Dedup: quality and scale"): a change that loses one true pair or adds one false pair on the held-out set fails here.
"""
from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

from bot.core.dedup.offline_reviewer import OfflineReviewer
from bot.core.dedup.retrieval import RetrievalIndex
from bot.core.dedup.similarity import cause_profile, features
from bot.core.lint.rules import lint_bytes
from bot.core.reports.parse import parse
from bot.core.reports.records import Severity
from tests.reports import canonical_report

PROJECT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("dedup_eval", PROJECT / "bench" / "dedup_eval.py")
dedup_eval = sys.modules.setdefault("dedup_eval", importlib.util.module_from_spec(_spec))
_spec.loader.exec_module(dedup_eval)
LABELS = {"duplicate", "subsumes", "overlaps", "distinct"}
# (set, least true positives, most false positives, least precision, least recall) as measured and reported.
# The held-out bar went from 23 to 20 true pairs with the mechanism families (issue 42, item 4): measured once,
# after the rules were final, and reported in docs/benchmarks.md; the agent-style set's rose from 4 tp / 2 fp to 5 / 0.
# The blind agent-style set was measured once, after both: 4 tp / 1 fp (recall 0.36), the same recall as before.
FLOORS = [("held-out", 20, 0, 1.0, 0.8), ("tune", 13, 0, 1.0, 1.0), ("in-sample", 35, 4, 0.89, 0.92),
          ("held-out-agents", 5, 0, 1.0, 0.62), ("held-out-blind", 4, 1, 0.8, 0.36)]


@pytest.mark.parametrize("name", ["held-out", "tune", "held-out-agents", "held-out-blind"])
def test_the_extra_sets_lint_clean_and_their_pairs_are_well_formed(name):
    data = dedup_eval.SETS[name]
    paths = sorted((data / "devs" / "issues").glob("perf_*.md"))
    assert len(paths) >= 10
    problems = [f"{f.file}:{f.line} {f.rule}" for p in paths
                for f in lint_bytes(f"devs/issues/{p.name}", p.read_bytes())
                if f.severity in (Severity.ERROR, Severity.WARNING)]
    assert not problems, problems
    slugs = {p.stem for p in paths}
    pairs = json.loads((data / "pairs.json").read_text())
    keys = [frozenset((p["a"], p["b"])) for p in pairs]
    assert len(set(keys)) == len(keys) and all(p["a"] in slugs and p["b"] in slugs for p in pairs)
    assert {p["label"] for p in pairs} <= LABELS and all(not p["hard_negative"] or p["label"] == "distinct"
                                                          for p in pairs)


def test_the_held_out_set_is_big_enough_and_mixed():
    _, pairs = dedup_eval.load_set(dedup_eval.SETS["held-out"])
    counts = {label: sum(p["label"] == label for p in pairs) for label in LABELS}
    assert len(pairs) >= 30 and min(counts.values()) >= 7, counts


@pytest.mark.parametrize("name,tp,fp,precision,recall", FLOORS)
def test_the_offline_reviewer_keeps_its_reported_figures(name, tp, fp, precision, recall):
    result = dedup_eval.evaluate(*dedup_eval.load_set(dedup_eval.SETS[name]))
    assert result["tp"] >= tp and result["fp"] <= fp, result
    assert result["precision"] >= precision and result["recall"] >= recall, result


def _report(slug: str, cause: str, program_name: str = "walk"):
    text = canonical_report(slug, title="Tree walk is slow", root_cause=cause)
    return parse(f"devs/issues/{slug}.md", text.replace("def sum", f"def {program_name}").encode()).record


def test_a_place_the_report_rules_out_is_not_blamed():
    record = _report("perf_a", "`runtime/c/heap.c: free_node` spins on one global lock for every erased node. "
                               "The scheduler's `idle_wait` is not the problem: under 3% of cycles.")
    profile = cause_profile(record)
    assert "free_node" in profile.places and "idle_wait" not in profile.places
    assert "heap.c" in profile.files and "perf" not in profile.places


def test_same_program_blaming_different_places_is_distinct_and_same_place_overlaps():
    lock = _report("perf_lock", "`free_node` (runtime/c/heap.c) pushes every erased node onto one global free "
                                "list under a spinlock; all threads contend on that spinlock.")
    sleep = _report("perf_sleep", "`idle_wait` (runtime/c/sched.c) sleeps a whole millisecond after one failed "
                                  "steal, so workers stay asleep while others have work.")
    again = _report("perf_lock_again", "Erased nodes go back through `free_node` in runtime/c/heap.c onto the "
                                       "global free list, whose spinlock every thread contends on.")
    index = RetrievalIndex([features(r) for r in (lock, sleep)])
    by_slug = {c.slug: c for c in index.candidates(features(again), 5)}
    reviewer = OfflineReviewer()
    assert reviewer.review(again, lock, by_slug["perf_lock"]).overlapping
    scores = RetrievalIndex([features(sleep)]).candidates(features(lock), 1)[0]
    assert scores.shape > 0.9  # the same program: retrieval alone cannot tell them apart
    assert not reviewer.review(lock, sleep, scores).overlapping
