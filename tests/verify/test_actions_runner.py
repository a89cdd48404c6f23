"""The `actions` runner end to end against the GitHub double: a fix PR's bench run dispatched as a workflow, the
runner played by deploy/github/perfbot_bench.py on a real gcc-built project, the samples zipped as an artifact,
and the verdict reached from a `workflow_run` webhook (GitHub's example payload) or by polling; hostile
artifacts refused."""
from __future__ import annotations

import io
import json
import os
import stat
import subprocess
import sys
import zipfile
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

import handlers
from bot.adapters.store.bench import bench_store, fix_store
from bot.core.config import ConfigFileError
from bot.core.config.instance import parse_instance_config
from bot.services.worker import Event
from tests.bench_project import PLAIN_CONFIG, build_project, report
from tests.flows import github_bot
from tests.npm_fixtures import webhook_examples
from tests.verify.test_fix_pull_requests import pull_event, repo_state

REPO, SLUG, BRANCH, WORKFLOW = "team/runtime", "perf_boxed_sum", "unbox-accumulator", "perfbot-bench.yml"
SCRIPT = Path(__file__).resolve().parents[2] / "deploy" / "github" / "perfbot_bench.py"
ACTIONS_CONFIG = PLAIN_CONFIG.replace("max_samples = 30", "max_samples = 8")
ACTIONS_RUNNER = """\
[[runners]]
name = "metal-box"
kind = "actions"
labels = ["c"]
runs_on = ["self-hosted", "metal"]
"""


@pytest.fixture
def world(github, database, tmp_path):
    github.add_repo(REPO)
    github.add_workflow(REPO, WORKFLOW)
    remote, heads = build_project(tmp_path / "remotes" / "team" / "runtime.git")
    heads["main"] = remote.write(".perfbot.toml", ACTIONS_CONFIG).write("devs/issues/perf_boxed_sum.md",
                                                                        report(counted=False)) \
        .commit("bench on GitHub Actions: exact outputs")
    remote.repo.git.branch(BRANCH, heads["fix/perf_boxed_sum"])
    remote.repo.git.branch("-D", "fix/perf_boxed_sum")  # the fix arrives as a PR, not as the report's branch
    with github_bot(github, database, tmp_path, ACTIONS_RUNNER) as (services, worker, _queue):
        services.reports.sync_and_mirror(REPO, None, None)
        github.add_pull(REPO, head_ref=BRANCH, head_sha=heads["fix/perf_boxed_sum"], base_ref="main",
                        base_sha=heads["main"], body="Fixes perf_boxed_sum", user="dev")
        assert handlers.dispatch(pull_event(github, heads, "opened"), services) == []
        assert worker.run_once()  # the queued bench run: dispatched, not measured here
        yield remote, heads, services


def the_dispatch(github):
    [dispatch] = github.dispatches(REPO)
    return dispatch


def run_the_runner(remote, plan: str, tmp_path: Path) -> bytes:
    """What the self-hosted runner does: a full clone, the script with the plan in its environment, the zip."""
    checkout = tmp_path / "runner" / "checkout"
    subprocess.run(["git", "clone", "-q", str(remote.root), str(checkout)], check=True)
    out = tmp_path / "runner" / "perfbot-samples.json"
    env = {**os.environ, "PERFBOT_PLAN": plan, "PERFBOT_OUT": str(out), "RUNNER_TEMP": str(tmp_path / "runner")}
    subprocess.run([sys.executable, str(SCRIPT)], cwd=checkout, env=env, check=True, timeout=300)
    return zipped({"perfbot-samples.json": out.read_bytes()})


def zipped(members: dict[str, bytes], symlink: bool = False) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in members.items():
            info = zipfile.ZipInfo(name)
            info.compress_type = zipfile.ZIP_DEFLATED
            if symlink:
                info.external_attr = (stat.S_IFLNK | 0o777) << 16
            archive.writestr(info, data)
    return buffer.getvalue()


def samples(run: dict, **change) -> bytes:
    """Made-up samples of a clear pass (head 1.0x, base 4x), for tests about everything but measuring."""
    sides = [{"side": label, "sha": sha, "language_seconds": [ratio * 0.01] * 6, "c_seconds": [0.01] * 6,
              "output": "42"} for label, sha, ratio in (("base", run.base, 4.0), ("head", run.head, 1.0))]
    result = {"run": run.id, "host": "metal-1", "sides": sides, "error": None, "verdict": None, **change}
    return zipped({"perfbot-samples.json": json.dumps(result).encode()})


def completed_payload(github, workflow_run_id: int, run_id: int, conclusion: str = "success",
                      actor: str | None = None) -> Event:
    payload = next(p for p in webhook_examples("workflow_run")
                   if p["action"] == "completed" and p["workflow_run"].get("display_title"))
    run = payload["workflow_run"]
    run.update(id=workflow_run_id, display_title=f"perfbot bench run {run_id}", path=f".github/workflows/{WORKFLOW}",
               event="workflow_dispatch", status="completed", conclusion=conclusion,
               html_url=f"{github.url}/{REPO}/actions/runs/{workflow_run_id}")
    run["actor"]["login"] = actor or github.login
    payload["repository"]["full_name"] = REPO
    payload.pop("installation", None)
    return Event("workflow_run", "completed", f"delivery-wr-{workflow_run_id}", payload, REPO, None)


def finish(github, services, artifact: bytes | None, conclusion: str = "success", listed_size: int | None = None):
    wid = github.start_workflow_run(REPO, the_dispatch(github))
    github.complete_workflow_run(REPO, wid, conclusion, {"perfbot-samples-1": artifact} if artifact else {},
                                 listed_size=listed_size)
    assert handlers.dispatch(completed_payload(github, wid, 1, conclusion), services) == []
    return wid


def test_a_fix_is_verified_on_github_actions_from_dispatch_to_verdict(world, github, database, tmp_path):
    remote, heads, services = world
    dispatch = the_dispatch(github)
    plan = json.loads(dispatch.inputs["plan"])
    assert (dispatch.workflow, dispatch.ref, dispatch.inputs["run"]) == (WORKFLOW, "main", "1")
    assert json.loads(dispatch.inputs["runs_on"]) == ["self-hosted", "metal"]
    fork_point = remote.repo.git.merge_base("main", BRANCH)
    assert (plan["base"], plan["head"], plan["slug"], plan["samples"]) == (
        fork_point, heads["fix/perf_boxed_sum"], SLUG, 8)
    assert plan["build"] == ["gcc", "-O2", "-o", "runtime", "runtime.c"] and "sum" in plan["program"]
    assert not (tmp_path / "bench").exists()  # nothing was built or run on perfbot's machine
    run = bench_store.get_run(database, 1)
    assert (run.status, run.runner, run.host) == ("running", "metal-box", "GitHub Actions")

    # The runner's script really builds and times both commits, but in wall time: on a shared machine its
    # ratios could say anything. Its artifact is checked as measured, then its times are made a clear pass
    # (head 1x, base 4x) so the verdict that the flow below follows is decided, not drawn.
    measured = json.loads(zipfile.ZipFile(io.BytesIO(run_the_runner(remote, dispatch.inputs["plan"], tmp_path)))
                          .read("perfbot-samples.json"))
    assert [(s["side"], s["sha"], s["output"]) for s in measured["sides"]] == [
        ("base", fork_point, "4463072"), ("head", heads["fix/perf_boxed_sum"], "4463072")]
    assert measured["error"] is None and all(len(s["language_seconds"]) == len(s["c_seconds"]) == 8
                                             and min(s["language_seconds"] + s["c_seconds"]) > 0
                                             for s in measured["sides"])
    for side, ratio in zip(measured["sides"], (4.0, 1.0), strict=True):
        side["language_seconds"], side["c_seconds"] = [ratio * 0.01] * 8, [0.01] * 8
    wid = finish(github, services, zipped({"perfbot-samples.json": json.dumps(measured).encode()}))
    run = bench_store.get_run(database, 1)
    assert (run.status, run.verdict) == ("done", "pass"), run.message
    assert run.message.startswith("perf_boxed_sum on metal-box") and "language/C" in run.message
    assert [s.decision for s in run.result.sides] == ["fail", "pass"]
    assert fix_store.open_records(database, REPO)[SLUG].verdict == "pass"
    with github.state.lock:
        statuses = [(s.context, s.state) for s in repo_state(github).statuses if s.sha == run.head]
        comments = [c.body for c in repo_state(github).comments.values() if c.issue_number == 2]
        labels = sorted(label.name for label in repo_state(github).issues[1].labels)
    assert statuses[0] == ("perfbot/verify perf_boxed_sum", "pending") and run.pr == 2
    assert statuses[-1] == ("perfbot/verify perf_boxed_sum", "success")
    assert len(comments) == 1 and "| head |" in comments[0] and "metal-box" in comments[0]
    assert "outcome: fixed" in labels

    writes = len(github.writes())
    assert handlers.dispatch(completed_payload(github, wid, 1), services) == []  # a redelivered webhook
    assert len(github.writes()) == writes and bench_store.get_run(database, 1).verdict == "pass"


def test_polling_finds_a_completed_run_whose_webhook_never_came(world, github, database):
    _, _, services = world
    run = bench_store.get_run(database, 1)
    wid = github.start_workflow_run(REPO, the_dispatch(github))
    github.complete_workflow_run(REPO, wid, "success", {"perfbot-samples-1": samples(run)})
    now = datetime.now(UTC)
    poll = Event("perfbot.actions-poll", None, "actions-poll-202612021600", {}, None, None)
    assert handlers.dispatch(poll, services) == []  # the scheduled job's delivery: under a minute, not asked yet
    assert bench_store.get_run(database, 1).status == "running"
    assert services.fixes.poll_actions(now + timedelta(minutes=2), "poll-1") == {REPO: 1}
    run = bench_store.get_run(database, 1)
    assert (run.status, run.verdict) == ("done", "pass") and "(host metal-1)" in run.message
    assert services.fixes.poll_actions(now + timedelta(minutes=5), "poll-2") == {}  # nothing left to look for


def test_polling_ends_a_run_whose_workflow_run_never_appeared_or_that_was_cancelled(world, github, database):
    _, _, services = world
    now = datetime.now(UTC)
    assert services.fixes.poll_actions(now + timedelta(minutes=5), "poll-1") == {REPO: 0}  # queued runs take a while
    assert services.fixes.poll_actions(now + timedelta(minutes=20), "poll-2") == {REPO: 1}
    run = bench_store.get_run(database, 1)
    assert run.verdict == "error" and "no workflow run titled 'perfbot bench run 1' appeared" in run.message


def test_a_cancelled_dispatched_run_ends_at_the_next_poll(world, github, database):
    _, _, services = world
    assert bench_store.request_cancel(database, 1) == "cancelling"
    assert services.fixes.poll_actions(datetime.now(UTC) + timedelta(minutes=2), "poll-1") == {REPO: 1}
    run = bench_store.get_run(database, 1)
    assert (run.status, run.verdict) == ("done", "cancelled")
    assert fix_store.open_records(database, REPO)[SLUG].verdict is None  # a stopped run says nothing


def test_a_failed_workflow_run_is_an_error_verdict(world, github, database):
    _, _, services = world
    wid = finish(github, services, None, "failure")
    run = bench_store.get_run(database, 1)
    assert (run.status, run.verdict) == ("done", "error")
    assert run.message == f"the bench workflow run ended failure: {github.url}/{REPO}/actions/runs/{wid}"
    assert fix_store.open_records(database, REPO)[SLUG].verdict == "error"


def test_a_workflow_run_perfbot_did_not_start_is_ignored(world, github, database):
    _, _, services = world
    run = bench_store.get_run(database, 1)
    wid = github.start_workflow_run(REPO, the_dispatch(github), actor="mallory")
    github.complete_workflow_run(REPO, wid, "success", {"perfbot-samples-1": samples(run)})
    assert handlers.dispatch(completed_payload(github, wid, 1, actor="mallory"), services) == []
    assert bench_store.get_run(database, 1).status == "running"


def bad_times(run: dict, times: list[float]) -> bytes:
    return samples(run, sides=[{"side": "base", "sha": run.base, "language_seconds": times,
                                "c_seconds": [0.01] * len(times), "output": ""}])


HOSTILE = {  # kind -> (the artifact, given the run; what the refusal says)
    "escape": (lambda run: zipped({"../escape": b"{}"}), "has an unsafe path"),
    "absolute": (lambda run: zipped({"/tmp/perfbot-evil": b"{}"}), "has an unsafe path"),
    "symlink": (lambda run: zipped({"perfbot-samples.json": b"/etc/passwd"}, symlink=True), "is a symbolic link"),
    "two files": (lambda run: zipped({"perfbot-samples.json": b"{}", "x.sh": b"#!"}), "holds 2 files"),
    "bomb": (lambda run: zipped({"perfbot-samples.json": b" " * (50 * 1024 * 1024)}), "over the 2097152-byte limit"),
    "ratio": (lambda run: zipped({"perfbot-samples.json": b" " * (1024 * 1024)}), "only a zip bomb does"),
    "wrong sha": (lambda run: samples(replace(run, head="0" * 40)), "measured other commits than bench run 1"),
    "nan": (lambda run: bad_times(run, [float("nan")]), "holds NaN, which is no time"),
    "negative": (lambda run: bad_times(run, [-0.01]), "must be a list of positive, finite times"),
    "not a zip": (lambda run: b"<Error>storage</Error>", "not a readable zip"),
}


# The refusals are read from the zip before anything is stored, so one store tells them all; the whole flow on
# PostgreSQL is the dispatch-to-verdict test's (this file's ten cases on both stores cost half a minute).
@pytest.mark.parametrize("db_url", ["sqlite"], indirect=True)
@pytest.mark.parametrize("kind", sorted(HOSTILE))
def test_a_hostile_artifact_is_refused_with_its_reason(world, github, database, tmp_path, kind):
    _, _, services = world
    make, reason = HOSTILE[kind]
    finish(github, services, make(bench_store.get_run(database, 1)))
    run = bench_store.get_run(database, 1)
    assert (run.status, run.verdict) == ("done", "error") and reason in run.message, run.message
    assert fix_store.open_records(database, REPO)[SLUG].verdict == "error"
    # The zip is read in memory, never extracted: no member lands anywhere.
    assert not list(tmp_path.parent.rglob("*escape*")) and not Path("/tmp/perfbot-evil").exists()


def test_an_artifact_listed_over_the_limit_is_never_downloaded(world, github, database):
    _, _, services = world
    finish(github, services, samples(bench_store.get_run(database, 1)), listed_size=11 * 1024 * 1024)
    run = bench_store.get_run(database, 1)
    assert run.verdict == "error" and "over the 10485760-byte limit" in run.message
    assert not [r for r in github.requests if r.path.startswith("/_artifacts/")]


def test_an_actions_runner_is_configured_strictly():
    base = '[[runners]]\nname = "gpu"\nkind = "actions"\nlabels = ["cuda"]\n'
    [runner] = parse_instance_config(base)[1].runners
    assert (runner.workflow, runner.runs_on) == ("perfbot-bench.yml", ("self-hosted", "cuda"))
    for extra, problem in (('workflow = "../x.yml"', "runners.workflow: '../x.yml' is not a valid workflow"),
                           ('runs_on = ["a b"]', "runners.runs_on: must list runner labels"),
                           ('host = "gpu.lan"', "runners.host: does not apply to actions runners")):
        with pytest.raises(ConfigFileError, match=problem.replace("[", r"\[").replace(".", r"\.")):
            parse_instance_config(base + extra)


def test_the_bench_script_reports_a_translation_that_computes_something_else(world, github, tmp_path):
    remote, heads, _ = world
    plan = {**json.loads(the_dispatch(github).inputs["plan"]), "base": None, "head": heads["wrong-output"]}
    zip_bytes = run_the_runner(remote, json.dumps(plan), tmp_path)
    result = json.loads(zipfile.ZipFile(io.BytesIO(zip_bytes)).read("perfbot-samples.json"))
    assert (result["verdict"], result["sides"]) == ("mismatch", [])
    assert "prints" in result["error"] and "not the same computation" in result["error"]
    assert subprocess.run(["git", "worktree", "list"], cwd=tmp_path / "runner" / "checkout", capture_output=True,
                          text=True).stdout.count("\n") == 1  # the runner's checkout keeps no worktrees
