"""A busy bench host is noticed: each timed run records the host's load and CPU steal, a time-based verdict
taken at a load beyond the cores says it is noisy, and the service posts it at once and measures it again later."""
from __future__ import annotations

from datetime import UTC

import pytest

from bot.adapters.runners import LocalRunner, contain
from bot.adapters.store.bench import bench_store
from bot.core.config import parse_repo_config
from bot.core.reports.parse import parse
from bot.core.verify.noise import Quiet, noise
from bot.services.bench.verify import verify
from tests.bench_project import WALL_CONFIG as CONFIG  # the noise guard reads times
from tests.bench_project import build_project, report
from tests.flows import local_bot


def runs(load: float, steal: float = 0.0, cores: int = 2, n: int = 5) -> list[dict]:
    return [{"wall": 0.1, "load": load, "steal": steal, "cores": cores} for _ in range(n)]


def test_a_host_at_its_cores_load_or_with_steal_is_noisy_for_times_only():
    assert noise(runs(1.0), "wall") is None
    assert noise(runs(3.4), "wall") == "the host was busy: load 3.4 on 2 cores"
    assert noise(runs(3.4), "user") is not None
    assert noise(runs(3.4), "instructions") is None and noise(runs(3.4), "metric:steps") is None
    assert noise(runs(0.5, steal=0.2), "wall") == "the hypervisor took 20% of the host's CPU time (steal)"
    assert noise(runs(2.4), "wall", Quiet(busy_load=2.0)) is None
    assert noise([{"wall": 0.1}], "wall") is None  # a runner that cannot tell (an old bench script) is not noisy


def test_every_run_records_the_hosts_load_and_steal(tmp_path):
    result = LocalRunner("local", tmp_path, tmp_path / "cache", build=None).run(["true"], tmp_path, 10)
    assert result.load is not None and result.load >= 0 and result.cores >= 1
    assert result.steal is None or 0 <= result.steal <= 1


@pytest.fixture
def busy(monkeypatch):
    monkeypatch.setattr(contain.os, "getloadavg", lambda: (9.0, 9.0, 9.0))  # as /proc/loadavg would say


def test_a_verdict_taken_on_a_busy_host_says_so(tmp_path, busy):
    repo, heads = build_project(tmp_path / "runtime")
    quiet = Quiet()  # the defaults, where CONFIG sets busy_load = 1000
    config = parse_repo_config(CONFIG).with_verify(max_samples=5, busy_load=quiet.busy_load, max_steal=quiet.max_steal)
    runner = LocalRunner("local", repo.root, tmp_path / "cache", build=config.build.argv)
    record = parse("devs/issues/perf_boxed_sum.md", report().encode()).record
    outcome = verify(record, config, runner, heads["fix/perf_boxed_sum"])
    assert outcome.noisy and outcome.noisy.startswith("the host was busy: load 9.0 on")
    assert "noisy: the host was busy" in outcome.message and outcome.as_dict()["noisy"] == outcome.noisy
    assert all(r["load"] == 9.0 for r in outcome.sides[0].runs["c"])


def test_the_service_posts_a_noisy_verdict_at_once_and_the_re_measure_replaces_it(tmp_path, database, busy,
                                                                                      monkeypatch):
    """One noise policy (issue #40): no run is held back for a quiet host. The first verdict is up after the
    first measurement, marked noisy, with when it is measured again; the re-measure replaces it."""
    import json

    from tests.lead.test_dashboard import make_client

    repo, _ = build_project(tmp_path / "runtime")
    config = CONFIG.replace("max_samples = 30", "max_samples = 5").replace("busy_load = 1000", "busy_load = 1.25")
    repo.write(".perfbot.toml", config + "noisy_retries = 1\n")
    repo.commit("one retry on a busy host")
    key, queue, tracker, services, worker = local_bot(database, repo.root, tmp_path)
    services.reports.sync_and_mirror(key, None, None)
    assert worker.run_once()
    [delivery] = queue.listing()
    run = bench_store.get_run(database, 1)
    assert run.status == "done" and run.verdict in ("pass", "fail", "inconclusive")  # posted at once
    due = run.options.remeasure_at
    hhmm = f"{due.astimezone(UTC):%H:%M}"
    assert run.options.noisy_tries == 1 and f"waiting for a quiet host, next try at {hhmm} UTC" in run.message
    assert "noisy: the host was busy" in run.message and run.result.noisy
    assert delivery["status"] == "pending" and "verdict posted" in delivery["error"]  # due again in ten minutes

    def comment() -> str:
        issues = json.loads(tracker.state_file.read_text())["issues"]
        return next(c["body"] for i in issues.values() for c in i["comments"]
                    if "perfbot:bench perf_boxed_sum" in c["body"])

    body = comment()
    assert f"⏳ waiting for a quiet host, next try at {hhmm} UTC: the next measurement replaces this verdict." in body
    assert "; noisy" in body.splitlines()[1]  # the headline says the verdict is noisy
    page = make_client(database, tmp_path).get("/dashboard/runs/1").get_data(as_text=True)
    assert f"waiting for a quiet host, next try at {hhmm} UTC" in page and 'id="run-waiting"' in page
    runs = make_client(database, tmp_path).get("/dashboard/runs").get_data(as_text=True)
    assert f"next try at {hhmm} UTC" in runs

    assert queue.redeliver(delivery["id"]) and worker.run_once()  # ten minutes later, still busy
    run = bench_store.get_run(database, 1)
    assert run.status == "done" and run.options.remeasure_at is None
    assert "noisy: the host was busy" in run.message and "(busy in all 2 measurements)" in run.message
    assert "waiting for a quiet host" not in run.message and "waiting for a quiet host" not in comment()
    assert queue.listing()[0]["status"] == "done"
    page = make_client(database, tmp_path).get("/dashboard/runs/1").get_data(as_text=True)
    assert 'id="run-waiting"' not in page


def test_perfbot_verify_answers_at_once_on_a_busy_host_and_says_what_replaces_it(tmp_path, busy, monkeypatch):
    """The CLI half of the one policy: the verdict now, marked noisy, and since a command measures once, the
    person is told that running it again on a quiet host replaces it (the service schedules that itself)."""
    import json

    from click.testing import CliRunner

    from bot.adapters.store.engine import Database
    from bot.cli import main
    from bot.core.verify.noise import ONCE_TEXT

    monkeypatch.setenv("PERFBOT_INSTANCE_DIR", str(tmp_path / "instance"))
    repo, _ = build_project(tmp_path / "runtime")
    repo.write(".perfbot.toml", CONFIG.replace("max_samples = 30", "max_samples = 5")
               .replace("busy_load = 1000", "busy_load = 1.25")).commit("a real busy threshold")
    db = f"sqlite:///{tmp_path / 'v.sqlite3'}"
    said = CliRunner().invoke(main, ["verify", "perf_boxed_sum", "--repo", str(repo.root), "--head", "main",
                                     "--db", db, "--format", "json"], catch_exceptions=False)
    answer = json.loads(said.output[said.output.index("{"):])
    assert answer["noisy"].startswith("the host was busy: load 9.0 on") and answer["verdict"] != "error"
    assert answer["message"].endswith(f"; {ONCE_TEXT}") and "next try at" not in answer["message"]
    stored = bench_store.get_run(Database(db), answer["run"])
    assert ONCE_TEXT in stored.message and not stored.remeasure_due  # no service run waits on it
