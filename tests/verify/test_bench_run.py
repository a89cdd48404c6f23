"""A bench run leaves the store typed: enums for purpose, status and test, its options' pieces as properties,
and one JSON shape (`as_dict`) that still carries the plain words stored."""
from datetime import UTC, datetime

import pytest

from bot.adapters.store.bench import bench_store
from bot.core.verify.bench_run import ActionsDispatch, BenchRun, Follower
from bot.core.verify.vocabulary import Purpose, RunStatus
from bot.core.verify.vocabulary import Test as IntervalTest

REPO, SLUG = "o/r", "perf_x"


def test_a_queued_run_reads_back_typed_and_its_options_as_properties(database):
    run_id = bench_store.queue_run(database, REPO, SLUG, base="a" * 40, head="b" * 40, purpose=Purpose.FIX,
                                   pr_number=4, requested_by="alice", options={"runner": "mini", "samples": 5})
    bench_store.add_follower(database, run_id, {"id": 9, "index": 1})
    run = bench_store.stored_run(database, run_id)
    assert isinstance(run, BenchRun)
    assert (run.purpose, run.status, run.verdict) == (Purpose.FIX, RunStatus.QUEUED, None)
    assert type(run.purpose) is Purpose and type(run.status) is RunStatus
    assert (run.runner_asked, run.noisy_tries, run.remeasure_due, run.actions) == ("mini", 0, False, None)
    assert run.followers == [Follower(9, 1)] and run.compares_base and not run.done and not run.measured
    with pytest.raises(AttributeError):
        run.status = RunStatus.DONE  # type: ignore[misc]  # frozen: a reader cannot change what it was given


def test_a_finished_run_carries_its_test_and_its_json_keeps_the_stored_words(database):
    run_id = bench_store.queue_run(database, REPO, SLUG, base=None, head="c" * 40, purpose=Purpose.REPRODUCE)
    sent = datetime(2026, 12, 5, 10, 0, tzinfo=UTC)
    bench_store.set_options(database, run_id, actions={"workflow": "perfbot-bench.yml",
                                                       "dispatched_at": sent.isoformat()})
    bench_store.finish_run(database, run_id, IntervalTest.FAIL, "reproduced", {"sides": [{"side": "head"}]})
    run = bench_store.stored_run(database, run_id)
    assert (run.status, run.verdict, run.measured, run.compares_base) == ("done", IntervalTest.FAIL, True, False)
    assert run.actions == ActionsDispatch("perfbot-bench.yml", sent)
    shown = run.as_dict()
    assert {k: shown[k] for k in ("id", "repo", "slug", "purpose", "status", "verdict", "base", "head")} == {
        "id": run_id, "repo": REPO, "slug": SLUG, "purpose": "reproduce", "status": "done", "verdict": "fail",
        "base": None, "head": "c" * 40}
    assert [type(shown[k]) for k in ("purpose", "status", "verdict")] == [str, str, str]  # plain words in JSON
    assert shown["at"] == run.created.isoformat() and bench_store.runs_for(database, SLUG) == [run]


def test_a_run_cancelled_before_it_ran_reads_as_cancelled(database):
    run_id = bench_store.queue_run(database, REPO, SLUG, base=None, head="d" * 40, purpose=Purpose.GUARD)
    assert bench_store.request_cancel(database, run_id) == "cancelled"
    run = bench_store.get_run(database, run_id)
    assert run is not None and (run.status, run.verdict, run.purpose) == (RunStatus.DONE, IntervalTest.CANCELLED,
                                                                          Purpose.GUARD)
    assert bench_store.get_run(database, run_id + 1) is None
