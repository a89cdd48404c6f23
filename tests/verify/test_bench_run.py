"""A bench run leaves the store typed: enums for purpose, status and test; its three JSON columns (progress, options,
result) parsed once into their types (core/verify/run_parts.py), rows of earlier versions included; and one JSON
shape (`as_dict`) that still carries the plain words stored."""
from datetime import UTC, datetime

import pytest

from bot.adapters.store.bench import bench_store
from bot.adapters.store.service_models import BenchRun as BenchRunRow
from bot.core.verify import bench_view
from bot.core.verify import verdict_words as words
from bot.core.verify.bench_run import ActionsDispatch, BenchRun, Follower, RunOptions, RunProgress, RunResult
from bot.core.verify.run_parts import SideResult
from bot.core.verify.stats import Interval
from bot.core.verify.suite import compare_suites
from bot.core.verify.units import result_unit
from bot.core.verify.vocabulary import Purpose, RunStatus
from bot.core.verify.vocabulary import Test as IntervalTest
from bot.mcp.standing_view import measurement
from bot.services.bench.verify import Outcome, Side

REPO, SLUG = "o/r", "perf_x"


def test_a_queued_run_reads_back_typed_and_its_options_as_properties(database):
    run_id = bench_store.queue_run(database, REPO, SLUG, base="a" * 40, head="b" * 40, purpose=Purpose.FIX,
                                   pr_number=4, requested_by="alice", options=RunOptions(runner="mini", samples=5))
    bench_store.add_follower(database, run_id, Follower(9, 1))
    bench_store.add_follower(database, run_id, Follower(9, 1))  # a line follows a run once
    run = bench_store.stored_run(database, run_id)
    assert isinstance(run, BenchRun)
    assert (run.purpose, run.status, run.verdict) == (Purpose.FIX, RunStatus.QUEUED, None)
    assert type(run.purpose) is Purpose and type(run.status) is RunStatus
    assert (run.runner_asked, run.noisy_tries, run.remeasure_due, run.actions) == ("mini", 0, False, None)
    assert run.followers == [Follower(9, 1)] and run.compares_base and not run.done and not run.measured
    assert run.options == RunOptions(runner="mini", samples=5, answers=(Follower(9, 1),))
    assert run.as_dict()["options"] == {"runner": "mini", "samples": 5, "answers": [{"id": 9, "index": 1}]}
    with pytest.raises(AttributeError):
        run.status = RunStatus.DONE  # type: ignore[misc]  # frozen: a reader cannot change what it was given
    with pytest.raises(TypeError):
        bench_store.set_options(database, run_id, sampels=3)  # a name RunOptions lacks is refused, not stored


def test_a_finished_run_carries_its_test_and_its_json_keeps_the_stored_words(database):
    run_id = bench_store.queue_run(database, REPO, SLUG, base=None, head="c" * 40, purpose=Purpose.REPRODUCE)
    sent = datetime(2026, 12, 5, 10, 0, tzinfo=UTC)
    bench_store.set_options(database, run_id, actions=ActionsDispatch("perfbot-bench.yml", sent))
    bench_store.finish_run(database, run_id, IntervalTest.FAIL, "reproduced",
                           RunResult((SideResult("head", "c" * 40),), verdict="fail", message="reproduced"))
    run = bench_store.stored_run(database, run_id)
    assert (run.status, run.verdict, run.measured, run.compares_base) == ("done", IntervalTest.FAIL, True, False)
    assert run.actions == ActionsDispatch("perfbot-bench.yml", sent)
    shown = run.as_dict()
    assert {k: shown[k] for k in ("id", "repo", "slug", "purpose", "status", "verdict", "base", "head")} == {
        "id": run_id, "repo": REPO, "slug": SLUG, "purpose": "reproduce", "status": "done", "verdict": "fail",
        "base": None, "head": "c" * 40}
    assert [type(shown[k]) for k in ("purpose", "status", "verdict")] == [str, str, str]  # plain words in JSON
    assert shown["options"] == {"actions": {"workflow": "perfbot-bench.yml", "dispatched_at": sent.isoformat()}}
    assert shown["at"] == run.created.isoformat() and bench_store.runs_for(database, SLUG) == [run]


def test_a_run_cancelled_before_it_ran_reads_as_cancelled(database):
    run_id = bench_store.queue_run(database, REPO, SLUG, base=None, head="d" * 40, purpose=Purpose.GUARD)
    assert bench_store.request_cancel(database, run_id) == "cancelled"
    run = bench_store.get_run(database, run_id)
    assert run is not None and (run.status, run.verdict, run.purpose) == (RunStatus.DONE, IntervalTest.CANCELLED,
                                                                          Purpose.GUARD)
    assert bench_store.get_run(database, run_id + 1) is None


def _outcome() -> Outcome:
    base = Side("base", "a" * 40, [1.0, 1.2], [0.5, 0.5], interval=Interval(1.9, 2.2, 2.4), decision="fail",
                measure="instructions", runs={"language": [{"wall": 1.0, "metrics": {"ITRS": 5}}],
                                              "c": [{"wall": 0.5, "metrics": {"ITRS": 3}}]})
    head = Side("head", "b" * 40, [0.5, 0.6], [0.5, 0.5], interval=Interval(0.9, 1.1, 1.3), decision="pass",
                against="runtime@v1 (abc)", factor=1.5, measure="instructions")
    suite = compare_suites({"fib": [1.0, 1.1, 1.0], "gone": [2.0]}, {"fib": [1.0, 1.0, 1.1]}, 0.1)
    return Outcome("pass", "fixed", [base, head], "mini", suite=suite, gain=Interval(1.6, 1.9, 2.2),
                   noisy="the host was busy")


def test_progress_and_result_are_written_typed_and_read_back_equal(database):
    run_id = bench_store.queue_run(database, REPO, SLUG, base="a" * 40, head="b" * 40, purpose=Purpose.FIX)
    outcome = _outcome()
    partial = RunResult(tuple(s.stored() for s in outcome.sides[:1]))  # the samples so far: sides, no verdict
    bench_store.save_progress(database, run_id, RunProgress("base", 2, 30), partial)
    running = bench_store.stored_run(database, run_id)
    assert (running.progress, running.result) == (RunProgress("base", 2, 30), partial)
    assert running.as_dict()["progress"] == {"side": "base", "taken": 2, "most": 30}
    assert set(running.as_dict()["result"]) == {"sides"}  # what a live page got before these types
    assert bench_view.progress_line(SLUG, running.progress, "host") == f"verifying {SLUG}: base 2/30 samples on host"

    bench_store.finish_run(database, run_id, IntervalTest.PASS, outcome.message, outcome.stored())
    done = bench_store.stored_run(database, run_id)
    assert done.result == outcome.stored() and done.as_dict()["result"] == outcome.as_dict()
    assert done.result.last is not None and done.result.last.against == "runtime@v1 (abc)"
    assert (done.result.measure, done.result.gain, done.result.noisy) == ("instructions", Interval(1.6, 1.9, 2.2),
                                                                          "the host was busy")
    assert done.result.sides[0].language_metrics == {"ITRS": 5}
    assert done.result.suite == outcome.suite and done.result.suite_verdict == "inconclusive"  # "gone" is missing


def test_the_json_of_an_outcome_reads_back_key_for_key():
    """`perfbot verify --format json`, `perfbot show` and MCP print `as_dict()`: parsing it and writing it again
    changes nothing, so the stored shape is the one written before these types."""
    stored = _outcome().as_dict()
    assert RunResult.from_json(stored).as_dict() == stored
    assert list(RunResult.from_json(stored).as_dict()) == list(stored)  # the same keys in the same order
    assert [list(SideResult.from_json(s).as_dict()) for s in stored["sides"]] == [list(s) for s in stored["sides"]]
    assert RunResult.from_json({}).as_dict() == {} and RunResult.from_json(None) == RunResult()


# Written by earlier versions: no measure, metrics, against or runs on a side, an input as a list, `in_main` in
# the result, no noisy/claim/gain keys, a re-measure done (`remeasure_at` null), progress never written (null).
OLD_RESULT = {"verdict": "pass", "message": "fixed", "runner": "mini",
              "sides": [{"side": "base", "sha": "a" * 40, "language_seconds": [2.0, 2.2], "c_seconds": [1.0, 1.0],
                         "interval": {"low": 1.9, "point": 2.1, "high": 2.3}, "decision": "fail", "input": ["6", "2"]},
                        {"side": "head", "sha": "b" * 40, "language_seconds": [1.0, 1.0], "c_seconds": [1.0, 1.0],
                         "interval": {"low": 0.9, "point": 1.0, "high": 1.1}, "decision": "pass"}],
              "suite": None, "in_main": True}
OLD_OPTIONS = {"runner": "mini", "remeasure_at": None, "answers": [{"id": 3, "index": 0}], "in_main": False}


def test_a_row_in_the_shape_of_an_earlier_version_still_reads(database):
    with database.session() as session:
        row = BenchRunRow(full_name=REPO, slug=SLUG, runner="mini", base_sha="a" * 40, head_sha="b" * 40,
                          verdict="pass", message="fixed", result=OLD_RESULT, status="done", purpose="fix",
                          options=OLD_OPTIONS, progress=None, created_at=datetime(2025, 1, 2, tzinfo=UTC))
        session.add(row)
        session.flush()
        run_id = row.id
    run = bench_store.stored_run(database, run_id)
    assert run.progress == RunProgress() and run.options == RunOptions(runner="mini", answers=(Follower(3, 0),))
    assert (run.measured, run.remeasure_due, run.noisy_tries, run.waiting) == (True, False, 0, "")
    base, head = run.result.sides
    assert (base.input, base.measure, base.against, base.language_metrics, head.factor) == ("6 2", None, "C", {},
                                                                                              None)
    assert run.result.in_main and run.result.claim is None and run.result.gain is None and not run.result.noisy
    assert result_unit(run.result).column == "s"  # no measure stored: wall seconds, as then
    told = words.of_run(run)
    assert told is not None and told.text == "fixed"
    assert [r.side for r in bench_view.side_rows(run.result)] == ["base (6 2)", "head"]
    assert bench_view.status_description(run) == "fixed 1.00x [0.90, 1.10]"
    assert measurement(run)["interval"] == {"low": 0.9, "point": 1.0, "high": 1.1}
    # Intended change: the JSON of an old row is written in today's shape, each missing key at its default
    # (no null `remeasure_at`, a side's input joined), so every reader sees one shape.
    shown = run.as_dict()
    assert shown["options"] == {"runner": "mini", "answers": [{"id": 3, "index": 0}]}
    assert shown["result"]["noisy"] is None and shown["result"]["already_in_base"] is False
    assert shown["result"]["sides"][0]["input"] == "6 2" and shown["result"]["sides"][1]["against"] == "C"
    # a writer that changes an old row's options keeps what it does not change
    bench_store.set_options(database, run_id, noisy_tries=1)
    assert bench_store.stored_run(database, run_id).options == RunOptions(runner="mini", noisy_tries=1,
                                                                           answers=(Follower(3, 0),))


def _swept_outcome() -> Outcome:
    """A par side swept in counted instructions (integer medians) and a GPU side with its CPU counts and modes, as
    services/bench/sweep.py and gpu_sweep.py leave them."""
    par = Side("head", "e" * 40, par=True, measure="instructions", against="4 threads", sweep_rules=(4, 0.75, 0.5),
               sweep={1: [1000, 1010, 990], 2: [520, 515, 530, 510], 4: [300, 290, 310]},
               interval=Interval(3.1, 3.33, 3.5), decision="pass")
    par.language, par.c = par.sweep[1], par.sweep[4]
    gpu = Side("head", "f" * 40, par=True, against="the GPU (against the best CPU count, 2 threads)",
               sweep_rules=(1, 0.75, 0.5), sweep={1: [100.0, 101.5], 2: [50.5, 51.0]},
               modes={"gpu": [25.0, 26.5], "auto": [25.5, 27.0]}, interval=Interval(1.8, 1.95, 2.1), decision="pass")
    gpu.language, gpu.c = gpu.sweep[2], gpu.modes["gpu"]
    return Outcome("pass", "fixed", [par, gpu], "mini")


def test_a_stored_sweep_and_gpu_summary_read_typed_and_write_back_byte_for_byte(database):
    """The sweep and GPU modes are parsed once into SweepSummary and GpuSummary; the JSON written from them again
    (the stored column, `--format json`, `perfbot show`, MCP) is the very text the run stored."""
    import json

    stored = json.dumps(_swept_outcome().as_dict())
    parsed = RunResult.from_json(json.loads(stored))
    assert json.dumps(parsed.as_dict()) == stored
    par, gpu = parsed.sides
    assert par.sweep is not None and gpu.gpu is not None and par.gpu is None
    assert [(p.threads, p.median, p.samples) for p in par.sweep.points] == [(1, 1000, 3), (2, 517.5, 4), (4, 300, 3)]
    assert par.sweep.points[-1].speedup == Interval(3.1, 3.33, 3.5)  # the claimed count's point is the verdict's
    assert par.sweep.seconds[4] == (300, 290, 310) and par.sweep.claimed == 4 and par.sweep.par_efficiency == 0.75
    assert [m.name for m in gpu.gpu.modes] == ["cpu 1", "cpu 2", "gpu", "auto"] and gpu.gpu.best_cpu == 2
    assert gpu.gpu.modes[0].speedup is None and gpu.gpu.modes[2].speedup is not None
    run_id = bench_store.queue_run(database, REPO, SLUG, base=None, head="e" * 40, purpose=Purpose.REPRODUCE)
    bench_store.finish_run(database, run_id, IntervalTest.PASS, "fixed", parsed)
    again = bench_store.stored_run(database, run_id)
    assert again.result == parsed and json.dumps(again.result.as_dict()) == stored


def test_a_sweep_of_an_odd_shape_still_reads():
    """A point without a whole speedup interval is dropped; a sweep without a flattening says none was measured."""
    side = SideResult.from_json({"side": "head", "one_thread_seconds": [1.0], "n_threads_seconds": [0.5],
                                 "sweep": {"claimed": 2, "par_efficiency": 0.75, "points": [
                                     {"threads": 1, "median": 1.0, "samples": 1,
                                      "speedup": {"low": 1.0, "point": 1.0, "high": 1.0}},
                                     {"threads": 2, "median": 0.5, "samples": 1, "speedup": None}]},
                                 "gpu": {"modes": {"gpu": {"median": 2.0, "samples": 3}}}})
    assert side.sweep is not None and [p.threads for p in side.sweep.points] == [1]
    assert side.sweep.flattening.label() == "no flattening measured" and side.sweep.holds_to is None
    assert side.gpu is not None and side.gpu.modes[0].speedup is None and side.gpu.best_cpu == 1
    assert SideResult.from_json({"side": "head", "sweep": {}, "gpu": None}).sweep is None
