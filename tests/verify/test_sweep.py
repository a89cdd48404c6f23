"""Scaling sweeps end to end: a real pthreads runtime (gcc-built, in git) swept over 1, 2 and 4 threads by the
local runner, a balanced and an irregular workload side by side; the curves and verdicts are the program's."""
from __future__ import annotations

import dataclasses
import json
import os
import re
from datetime import UTC, datetime, timedelta

import pytest

from bot.adapters.runners.local import LocalRunner
from bot.core.config import parse_repo_config
from bot.core.reports.parse import parse
from bot.services.bench.sweep import counts_for
from bot.services.bench.verify import verify
from tests.sweep_project import REPORTS, SWEEP_CONFIG, build_sweep_project


class Recording:
    """The local runner, with the thread count of every run it is asked for written down."""

    def __init__(self, runner: LocalRunner) -> None:
        self.inner, self.threads = runner, []

    def __getattr__(self, name):
        return getattr(self.inner, name)

    def run(self, argv, cwd, timeout):
        if "--threads" in argv:
            self.threads.append(int(argv[argv.index("--threads") + 1]))
        return self.inner.run(argv, cwd, timeout)


@pytest.fixture(scope="module")
def swept(tmp_path_factory):
    root = tmp_path_factory.mktemp("sweep")
    repo, heads = build_sweep_project(root / "runtime")
    config = parse_repo_config(SWEEP_CONFIG)
    runner = Recording(LocalRunner("local", repo.root, root / "cache", build=config.build.argv))
    records = {slug: parse(f"devs/issues/{slug}.md", text.encode()).record for slug, text in REPORTS.items()}
    outcomes = {}
    for slug, record in records.items():
        runner.threads.clear()
        outcomes[slug] = (verify(record, config, runner, heads["main"]), list(runner.threads))
    return heads, config, runner, records, outcomes


def _points(outcome) -> dict[int, dict]:
    return {p["threads"]: p for p in outcome.as_dict()["sides"][-1]["sweep"]["points"]}


def test_a_balanced_workload_scales_and_passes_an_irregular_one_flattens_and_fails(swept):
    _, _, _, _, outcomes = swept
    balanced, irregular = outcomes["perf_balanced_items"][0], outcomes["perf_irregular_items"][0]
    assert balanced.verdict == "pass", balanced.message
    assert irregular.verdict == "fail", irregular.message
    even, skewed = _points(balanced), _points(irregular)
    assert sorted(even) == sorted(skewed) == [1, 2, 4]
    # Spans of 200 units at one thread; static blocks give thread 0 170 of them on two threads, 120 on four.
    speedups = {n: (even[n]["speedup"]["point"], skewed[n]["speedup"]["point"]) for n in (2, 4)}
    assert speedups == {2: (2.0, pytest.approx(200 / 170)), 4: (4.0, pytest.approx(200 / 120))}
    assert all(p["speedup"]["low"] == p["speedup"]["high"] for p in (*even.values(), *skewed.values()))
    balanced_sweep = balanced.as_dict()["sides"][-1]["sweep"]
    irregular_sweep = irregular.as_dict()["sides"][-1]["sweep"]
    assert balanced_sweep["flattening"]["after"] is None and balanced_sweep["holds_to"] == 4
    assert irregular_sweep["flattening"]["after"] == 1 and irregular_sweep["flattening"]["to"] == 2
    assert irregular_sweep["holds_to"] is None
    assert "flattens after 1 thread (1→2 gains" in irregular.message and "no flattening" in balanced.message
    assert "holds 0.75 of ideal up to 4 threads" in balanced.message


def test_every_round_runs_each_count_once_alternating_direction(swept):
    _, _, _, _, outcomes = swept
    outcome, threads = outcomes["perf_balanced_items"]
    rounds = len(outcome.sides[-1].c)
    assert rounds >= 5 and threads[:3] == [1, 2, 4]  # one warm-up per count, then the rounds
    taken = threads[3:]
    assert len(taken) == 3 * rounds
    for n in range(rounds):
        assert taken[3 * n: 3 * n + 3] == ([1, 2, 4] if n % 2 == 0 else [4, 2, 1])
    side = outcome.sides[-1]
    assert all(len(v) == rounds for v in side.sweep.values()) and side.language is side.sweep[1]


def test_the_default_sweep_is_one_to_the_hosts_cores_with_the_claim(swept):
    _, config, runner, records, _ = swept
    record = records["perf_balanced_items"]
    default = config.with_verify(threads=None)
    cores = len(os.sched_getaffinity(0))
    assert runner.cores() == cores
    assert counts_for(record, default, runner) == tuple(sorted({*range(1, cores + 1), 2}))
    claims_twelve = dataclasses.replace(record, threads=12)
    assert counts_for(claims_twelve, config, runner) == (1, 2, 4, 12)  # the claim is always measured


def test_a_fix_that_hands_items_out_dynamically_balances_the_irregular_workload(swept):
    heads, config, runner, records, _ = swept
    outcome = verify(records["perf_irregular_items"], config, runner, heads["fix/dynamic-items"], base=heads["main"])
    base, head = (side.as_dict()["sweep"] for side in outcome.sides)
    assert outcome.verdict == "pass", outcome.message
    assert base["flattening"]["after"] == 1 and head["flattening"]["after"] is None
    # The least-loaded hand-out gives each of four threads one heavy item and two light ones: 50 units each.
    assert [p["speedup"]["point"] for p in head["points"]] == [1.0, 2.0, 4.0]
    assert base["points"][-1]["speedup"]["point"] == pytest.approx(200 / 120)


def test_a_sweep_in_wall_time_samples_every_count_and_computes_its_intervals(swept):
    """The default measure of par reports. Wall time on this shared machine decides nothing a test can assert,
    so this asserts the machinery: every count sampled each round, an interval per count, a decision taken."""
    heads, config, runner, records, _ = swept
    wall = config.with_verify(max_samples=6, measure="wall")
    outcome = verify(records["perf_balanced_items"], wall, runner, heads["main"])
    side = outcome.sides[-1]
    points = _points(outcome)
    assert side.measure == "wall" and outcome.verdict in ("pass", "fail", "inconclusive", "implausible")
    assert sorted(points) == [1, 2, 4] and len({len(v) for v in side.sweep.values()}) == 1
    assert 5 <= len(side.c) <= 6 and all(p["samples"] == len(side.c) for p in points.values())
    assert all(p["speedup"]["low"] <= p["speedup"]["point"] <= p["speedup"]["high"] for p in points.values())
    assert all(0 < run["wall"] == value for run, value in zip(side.runs["c"], side.c, strict=True))


def test_a_queued_run_shows_the_curve_in_its_comment_and_on_the_dashboard(tmp_path):
    import handlers
    from bot.adapters.git import local_full_name
    from bot.adapters.local_issues import FileIssues
    from bot.adapters.store.bench import bench_store
    from bot.adapters.store.engine import Database
    from bot.adapters.store.queue import DeliveryQueue
    from bot.digest.render import make_digest
    from bot.services.bench.bench_flow import BenchFlow
    from bot.services.bench.fix_flow import FixFlow
    from bot.services.usecases import BotServices, RepoSource
    from bot.services.worker import Worker
    from tests.lead.test_dashboard import make_client

    database = Database(f"sqlite:///{tmp_path / 'perfbot.sqlite3'}")  # the store is not what this test is about
    repo, _heads = build_sweep_project(tmp_path / "runtime")
    key, queue, tracker = local_full_name(repo.root), DeliveryQueue(database), FileIssues(tmp_path / "issues")
    bench = BenchFlow(database, lambda conf, path, config: LocalRunner(conf.name, path, tmp_path / "bench",
                                                                       build=config.build.argv), comment_every=0)
    services = BotServices(database, lambda _name, _inst: tracker, RepoSource(local={key: repo.root}),
                           bot_login="perfbot", fixes=FixFlow(database, queue.enqueue), bench=bench)
    worker = Worker(queue, lambda event: handlers.dispatch(event, services), owner="test", lease_seconds=60,
                    max_attempts=2)
    services.reports.sync_and_mirror(key, None, None)
    assert [d["id"] for d in queue.listing()] == ["bench-1"]  # only the irregular report names the fix
    assert worker.run_once()
    run = bench_store.get_run(database, 1)
    assert (run.slug, run.status, run.verdict) == ("perf_irregular_items", "done", "pass"), run.message
    issues = json.loads(tracker.state_file.read_text())["issues"]
    body = next(c["body"] for i in issues.values() for c in i["comments"]
                if c["body"].startswith("<!-- perfbot:bench perf_irregular_items"))
    assert "**Scaling, base**: below 0.75 of ideal from 2 threads on; flattens after 1 thread (1→2 gains" in body
    assert "**Scaling, head**: holds 0.75 of ideal up to 4 threads; no flattening measured." in body
    curve = body[body.index("```mermaid"):]
    assert 'x-axis "threads" ["1", "2", "4"]' in curve and curve.count("    line [") == 3
    assert "    line [1, 2, 4]\n```" in curve  # the ideal line, last
    rows = [line for line in body.splitlines() if line.startswith("| 2 (claimed) |")]
    assert len(rows) == 2 and all(line.count("|") == 6 for line in rows)
    # one interval per figure: each side's verdict row and its sweep's claimed row show the same speedup
    verdict_rows = [line for line in body.splitlines() if line.startswith(("| base |", "| head |"))]
    assert [line.split("|")[5].strip() for line in verdict_rows] == [line.split("|")[3].strip() for line in rows]
    page = make_client(database, tmp_path).get("/dashboard/runs/1").get_data(as_text=True)
    chart = page[page.index('id="scaling-chart"'):page.index("</svg>", page.index('id="scaling-chart"'))]
    assert '<svg role="img" aria-label="bench run 1: perf_irregular_items speedup by threads"' in chart
    assert "ideal" in chart and "flattens after 1 thread" in page and "2 (claimed)" in page
    record_url = re.search(r'href="(/dashboard/records/\d+)" id="run-record"', page).group(1)
    history = make_client(database, tmp_path).get(record_url).get_data(as_text=True)
    assert 'aria-label="bench run 1: perf_irregular_items speedup by threads"' in history
    digest, text = make_digest(database, key, parse_repo_config(SWEEP_CONFIG), since=None,
                               now=datetime.now(UTC) + timedelta(minutes=1))
    [row] = digest.par_scaling  # the balanced report was never measured: it is not ranked
    assert (row.slug, row.threads, row.claimed, row.flattens_after) == ("perf_irregular_items", 4, 2, None)
    assert tuple(row.efficiency) == (1.0, 1.0, 1.0) and "| `perf_irregular_items` | open | 4 | 1.00 [" in text
    database.dispose()
