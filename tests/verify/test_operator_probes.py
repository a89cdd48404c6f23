"""Issue 38's probes of the configuration, through the real entry points: a `.perfbot.toml` on main that turns
its own sandbox off, in service mode (a fix PR verified) and at the terminal (`perfbot verify`)."""
from __future__ import annotations

import json

import pytest

import handlers
from bot.adapters.store.bench import bench_store
from bot.services.worker import Event
from tests.bench_project import CONFIG, build_project
from tests.flows import github_bot
from tests.verify.test_fix_pull_requests import BRANCH, REPO, pull_event, repo_state
from tests.webhooks import comment_payload

# What the probe committed to main: the bot's own host as a runner, uncontained, and a folder of it shown.
WIDENING = CONFIG + '\n[[runners]]\nname = "here"\nkind = "local"\nlabels = ["c"]\nsandbox = "none"\n' \
                    '\n[sandbox]\nreadable = ["/opt"]\n'


def test_a_perfbot_toml_that_turns_its_sandbox_off_runs_nothing_in_service_mode(github, database, tmp_path):
    github.add_repo(REPO)
    remote, heads = build_project(tmp_path / "remotes" / "team" / "runtime.git")
    heads["main"] = remote.write(".perfbot.toml", WIDENING).commit("run reports on the bot host, unsandboxed")
    remote.repo.git.branch(BRANCH, heads["fix/perf_boxed_sum"])
    with github_bot(github, database, tmp_path) as (services, worker, _queue):
        services.reports.sync_and_mirror(REPO, None, None)
        github.add_pull(REPO, head_ref=BRANCH, head_sha=heads["fix/perf_boxed_sum"], base_ref="main",
                        base_sha=heads["main"], body="Fixes perf_boxed_sum", user="dev")
        assert handlers.dispatch(pull_event(github, heads, "opened"), services) == []
        assert not worker.run_once()  # a .perfbot.toml that does not parse verifies nothing unasked
        # A writer asks on the pull request: the run is queued, and ends before anything is built or run.
        github.set_permission(REPO, "wendy", "write")
        body = "/perf verify perf_boxed_sum"
        payload = comment_payload(REPO, 2, github.add_comment(REPO, 2, body, user="wendy"), body, "wendy", pull=True)
        assert handlers.dispatch(Event("issue_comment", "created", "c-1", payload, REPO, None), services) == []
        assert worker.run_once()
    run = bench_store.get_run(database, 1)
    assert run.verdict == "error", run
    line = WIDENING.splitlines().index("[[runners]]") + 1
    assert f".perfbot.toml:{line}: runners: not here" in run.message
    assert "instance/perfbot.toml" in run.message
    assert not (tmp_path / "bench").exists()  # nothing was built or run: no worktree on the bot's host
    with github.state.lock:
        said = " ".join(c.body for c in repo_state(github).comments.values())
    assert 'sandbox = "none"' not in said.replace(f"{line}: runners", "")  # no refusal teaches the way out


@pytest.fixture
def project(tmp_path, monkeypatch):
    monkeypatch.setenv("PERFBOT_INSTANCE_DIR", str(tmp_path / "instance"))
    repo, heads = build_project(tmp_path / "runtime")
    repo.repo.git.checkout("-q", "-b", "wrong", heads["wrong-output"])
    return repo


def verify(*args: str):
    from click.testing import CliRunner

    from bot.cli import main

    return CliRunner().invoke(main, ["verify", "perf_boxed_sum", *args, "--format", "json"])


def test_the_cli_refuses_a_repositorys_sandbox_and_takes_the_operators_word(project):
    project.write(".perfbot.toml", WIDENING).commit("widen")
    refused = verify("--repo", str(project.root))
    assert refused.exit_code == 1 and ".perfbot.toml" in refused.output and "runners: not here" in refused.output
    project.write(".perfbot.toml", CONFIG).commit("narrow again")
    # The person at the terminal is the operator: --no-sandbox is theirs to say, and the result says it too.
    ran = verify("--repo", str(project.root), "--head", "wrong", "--no-sandbox")
    data = json.loads(ran.output[ran.output.index("{"):])
    assert data["verdict"] == "output_mismatch" and 'runner local has sandbox = "none"' in data["message"], data
