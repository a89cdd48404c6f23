"""Verifying commits older than `.perfbot.toml`: the configuration, its build script and the report come from the
default branch (or a ref named, or `--config FILE`), never from the commits measured; real git, real gcc."""
from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from bot.adapters.git import GitRepository
from bot.adapters.runners.actions import dispatch_inputs
from bot.adapters.runners.base import BuildError
from bot.adapters.runners.local import LocalRunner
from bot.cli import main
from bot.core.verify.bench_run import BenchRun, RunOptions
from bot.core.verify.vocabulary import Purpose, RunStatus
from bot.errors import UserError
from bot.services.bench import bench_inputs
from tests.bench_project import BUILD_SCRIPT, CONFIG, SCRIPT_CONFIG, build_history_project, report

BENCH_SCRIPT = Path(__file__).resolve().parents[2] / "deploy" / "github" / "perfbot_bench.py"


@pytest.fixture(scope="module")
def history(tmp_path_factory):
    repo, heads = build_history_project(tmp_path_factory.mktemp("history") / "runtime")
    for old in ("old-slow", "old-fast"):  # what makes the test mean something: the old commits carry none of it
        for path in (".perfbot.toml", ".perfbot/build.sh", "devs/issues/perf_boxed_sum.md"):
            assert subprocess.run(["git", "cat-file", "-e", f"{heads[old]}:{path}"], cwd=repo.root,
                                  capture_output=True).returncode != 0
    return repo, heads


@pytest.fixture
def cli(tmp_path, monkeypatch):
    monkeypatch.setenv("PERFBOT_INSTANCE_DIR", str(tmp_path / "instance"))
    runner = CliRunner()
    return lambda *args: runner.invoke(main, ["verify", "perf_boxed_sum", *args])


def _json(result) -> dict:
    return json.loads(result.output[result.output.index("{"):])


def test_a_pair_of_commits_older_than_the_configuration_is_verified(history, cli, tmp_path):
    repo, heads = history
    result = cli("--repo", str(repo.root), "--base", heads["old-slow"], "--head", heads["old-fast"], "--format", "json")
    data = _json(result)
    base, head = data["sides"]
    assert (result.exit_code, data["verdict"]) == (0, "fixed"), result.output  # decided on the step count
    assert base["decision"] == "fail" and head["interval"]["point"] < 2.0 < base["interval"]["low"]
    assert base["output"] == head["output"] == "4463072"
    assert data["plan"]["config"].startswith(".perfbot.toml at main (" + heads["main"][:12])
    # The default branch's script built each old checkout with the define of its time, given path and sha.
    worktrees = tmp_path / "instance" / "bench" / "local" / "worktrees"
    for old in ("old-slow", "old-fast"):
        assert (worktrees / heads[old] / "build.log").read_text() == f"{heads[old]} U24_MASK\n"
    main_alone = cli("--repo", str(repo.root), "--head", "main", "--format", "json")
    # the fast runtime alone: the claim is not reproduced there (exit 1)
    assert (main_alone.exit_code, _json(main_alone)["verdict"]) == (1, "not_reproduced"), main_alone.output
    assert (worktrees / heads["main"] / "build.log").read_text() == f"{heads['main']} WORD_MASK\n"


def test_a_configuration_is_tried_with_config_before_it_is_committed(history, cli, tmp_path):
    repo, heads = history
    # The obvious build, tried first: the old commits predate the rename and say so.
    plain = tmp_path / "plain.toml"
    plain.write_text(CONFIG.replace('"-O2", "-o", "runtime"', '"-O2", "-DWORD_MASK=0xFFFFFFu", "-o", "runtime"'))
    result = cli("--repo", str(repo.root), "--base", heads["old-slow"], "--head", heads["old-fast"], "--config",
                 str(plain))
    assert result.exit_code == 1 and f"configuration: {plain}" in result.output
    assert f"-DWORD_MASK=0xFFFFFFu -o runtime runtime.c at {heads['old-slow'][:12]} exited 1" in result.output
    assert "U24_MASK" in result.output  # the end of what gcc said: the old name is the one it lacks
    # A script not committed yet: taken from the working tree, as the file being tried is.
    (repo.root / ".perfbot" / "try.sh").write_text(BUILD_SCRIPT.replace("build.log", "try.log"))
    tried = tmp_path / "tried.toml"
    tried.write_text(SCRIPT_CONFIG.replace(".perfbot/build.sh", ".perfbot/try.sh").replace("max_samples = 30",
                                                                                         "max_samples = 12"))
    result = cli("--repo", str(repo.root), "--head", heads["old-fast"], "--config", str(tried), "--format", "json")
    data = _json(result)
    assert (result.exit_code, data["verdict"]) == (1, "not_reproduced"), result.output
    assert data["plan"]["config"] == str(tried) and data["plan"]["max_samples"] == 12
    assert (tmp_path / "instance" / "bench" / "local" / "worktrees" / heads["old-fast"] / "try.log").is_file()


@pytest.mark.parametrize("text, message", [
    ('[run]\nlangauge = ["./runtime", "{file}"]\n', "{file}:2: run.langauge: unknown key; did you mean 'language'?"),
    ('[build]\nscript = ".perfbot/none.sh"\n', "{file}: build.script: .perfbot/none.sh is not in the working tree"),
    ('[build]\nscript = "runtime.c"\n', "{file}: build.script: runtime.c is run as a program ({{script}} {{checkout}}"
                                        " {{sha}}) but has no #! line"),
    ('[build]\ncommand = ["sh", "{script}"]\n', "{file}:2: build.command: uses {{script}} but [build] names no script"),
    ('[build]\nscript = "../outside.sh"\n', "{file}:2: build.script: '../outside.sh' must be a path inside the "
                                            "repository"),
    ('[build]\ncommand = ["make", "{file}"]\n', "{file}:2: build.command: unknown placeholder {{file}}; use "
                                               "{{checkout}}, {{sha}} or {{script}}"),
])
def test_a_bad_config_file_is_named_with_its_line_and_key(history, cli, tmp_path, text, message):
    repo, heads = history
    bad = tmp_path / "bad.toml"
    bad.write_text(text)
    result = cli("--repo", str(repo.root), "--head", heads["old-fast"], "--config", str(bad))
    assert result.exit_code == 1 and message.format(file=bad) in result.output, result.output
    assert not (tmp_path / "instance" / "bench").exists()  # refused before anything was checked out


def test_a_missing_config_file_is_a_usage_error(history, cli, tmp_path):
    repo, _heads = history
    result = cli("--repo", str(repo.root), "--config", str(tmp_path / "nope.toml"))
    assert result.exit_code == 2 and "--config" in result.output and "does not exist" in result.output


def test_the_report_and_config_come_from_the_ref_named_never_the_measured_commits(history, cli):
    repo, heads = history
    repo.repo.git.checkout("-q", "-b", "draft", heads["main"])
    repo.write("devs/issues/perf_draft_sum.md", report()).write(
        ".perfbot.toml", SCRIPT_CONFIG.replace("max_samples = 30", "max_samples = 9")).commit("a draft report")
    repo.repo.git.checkout("-q", "main")
    runner = CliRunner()
    def verify(*args):
        return runner.invoke(main, ["verify", "perf_draft_sum", "--repo", str(repo.root), *args])
    missing = verify("--head", heads["old-fast"])
    assert missing.exit_code == 1 and "devs/issues/perf_draft_sum.md is not on main (" in missing.output
    result = verify("--head", heads["old-fast"], "--ref", "draft", "--format", "json")
    data = _json(result)
    assert (result.exit_code, data["verdict"]) in ((1, "not_reproduced"), (3, "inconclusive")), result.output
    assert data["plan"]["max_samples"] == 9 and data["plan"]["config"].startswith(".perfbot.toml at draft (")
    assert data["plan"]["head"] == heads["old-fast"]


def test_queued_runs_read_the_default_branch_whatever_head_they_measure(history):
    repo, heads = history
    git_repo = GitRepository(repo.root)
    try:
        config, record = bench_inputs.for_run(git_repo, queued("perf_boxed_sum", heads["old-slow"], {"samples": 7}))
        assert record.slug == "perf_boxed_sum" and config.verify.max_samples == 7
        assert config.build_script.path == ".perfbot/build.sh" and config.build_script.text == BUILD_SCRIPT
        # Only parsed (digest, fix flags): the script is named, not loaded, and need not even exist.
        assert bench_inputs.read_config(git_repo, heads["main"]).build_script.text is None
        with pytest.raises(UserError, match=r"perf_nope.md is not on the default branch or the head"):
            bench_inputs.for_run(git_repo, queued("perf_nope", heads["old-slow"], {}))
    finally:
        git_repo.close()


def test_a_default_branch_without_the_script_it_names_is_refused_with_the_fix(tmp_path):
    repo, heads = build_history_project(tmp_path / "runtime")
    heads["main"] = repo.delete(".perfbot/build.sh").commit("lose the build script")
    git_repo = GitRepository(repo.root)
    try:
        with pytest.raises(UserError, match=r"\.perfbot\.toml at main \(\w{12}\): build\.script: \.perfbot/build\.sh "
                                            r"is not in main \(\w{12}\); commit it there"):
            bench_inputs.for_run(git_repo, queued("perf_boxed_sum", heads["old-slow"], {}))
    finally:
        git_repo.close()


def test_argv_only_a_checkout_path_with_blanks_and_dollars_reaches_the_script_whole(history, tmp_path):
    repo, heads = history
    git_repo = GitRepository(repo.root)
    try:
        config = bench_inputs.bench_config(git_repo, bench_inputs.source_of(git_repo))
    finally:
        git_repo.close()
    cache = tmp_path / "cache dir $(touch pwned); `touch pwned2`"
    runner = LocalRunner("local", repo.root, cache, build=config.build.argv, build_script=config.build_script)
    workspace = runner.prepare(heads["old-slow"])
    assert ((workspace / "build.log").read_text() == f"{heads['old-slow']} U24_MASK\n"
            and (workspace / "runtime").is_file())
    assert not list(tmp_path.rglob("pwned*")) and not list(repo.root.rglob("pwned*"))
    # A changed script (a configuration being tried) builds the commit afresh; the same one reuses the build.
    changed = dataclasses.replace(config.build_script, text=BUILD_SCRIPT.replace('"$2 $mask"', '"again $mask"'))
    again = LocalRunner("local", repo.root, cache, build=config.build.argv, build_script=changed)
    assert again.prepare(heads["old-slow"]) == workspace and (workspace / "build.log").read_text() == "again U24_MASK\n"
    (workspace / "stamp").write_text("kept")
    assert again.prepare(heads["old-slow"]) == workspace and (workspace / "stamp").exists()
    assert runner.prepare(heads["old-slow"]) == workspace and not (workspace / "stamp").exists()
    failing = dataclasses.replace(config.build_script, text="#!/bin/sh\necho \"no WORD_MASK in $1\" >&2\nexit 4\n")
    with pytest.raises(BuildError, match=rf"build \.perfbot/build\.sh {{checkout}} {{sha}} at {heads['old-fast'][:12]} "
                                         r"exited 4:\nno WORD_MASK in /"):
        LocalRunner("local", repo.root, cache, build=config.build.argv, build_script=failing).prepare(heads["old-fast"])


def test_the_actions_plan_carries_the_default_branchs_script_and_the_bench_script_builds_old_commits(tmp_path):
    repo, heads = build_history_project(tmp_path / "runtime", plain=True)  # what the bench script supports
    git_repo = GitRepository(repo.root)
    try:
        run = BenchRun(id=41, repo="o/r", slug="perf_boxed_sum", purpose=Purpose.FIX, status=RunStatus.QUEUED,
                       base=heads["old-slow"], head=heads["old-fast"], options=RunOptions(samples=3))
        config, record = bench_inputs.for_run(git_repo, run)
    finally:
        git_repo.close()
    from bot.core.config import Runner

    gpu = Runner(name="gpu", kind="actions", labels=("c",), runs_on=("self-hosted",))
    inputs = dispatch_inputs(run, record, config, gpu)
    plan = json.loads(inputs["plan"])
    assert plan["build"] == ["{script}", "{checkout}", "{sha}"]
    assert plan["build_script"] == {"name": "build.sh", "text": BUILD_SCRIPT}
    # What the self-hosted runner does: a clone, the script on the default branch's checkout, the plan given.
    checkout, out = tmp_path / "checkout", tmp_path / "samples.json"
    subprocess.run(["git", "clone", "-q", str(repo.root), str(checkout)], check=True)
    env = {**os.environ, "PERFBOT_PLAN": inputs["plan"], "PERFBOT_OUT": str(out),
           "RUNNER_TEMP": str(tmp_path)}
    subprocess.run([sys.executable, str(BENCH_SCRIPT)], cwd=checkout, env=env, check=True, timeout=300)
    result = json.loads(out.read_text())
    assert result["error"] is None, result["error"]
    assert [(s["side"], s["sha"], s["output"], len(s["c_seconds"])) for s in result["sides"]] == [
        ("base", heads["old-slow"], "4463072", 3), ("head", heads["old-fast"], "4463072", 3)]


def test_a_queued_run_verifies_commits_older_than_the_configuration(tmp_path, database):
    """The service's path: a queued bench run, measured by the worker through the runner make_runner builds."""
    import handlers
    from bot.adapters.git import local_full_name
    from bot.adapters.local_issues import FileIssues
    from bot.adapters.runners import make_runner
    from bot.adapters.store.bench import bench_store
    from bot.adapters.store.queue import DeliveryQueue
    from bot.services.bench.bench_flow import BenchFlow
    from bot.services.bench.fix_flow import FixFlow
    from bot.services.usecases import BotServices, RepoSource
    from bot.services.worker import Worker

    repo, heads = build_history_project(tmp_path / "runtime")
    key, queue, tracker = local_full_name(repo.root), DeliveryQueue(database), FileIssues(tmp_path / "issues")
    bench = BenchFlow(database, lambda conf, path, config: make_runner(conf, path, tmp_path / "bench", config, None),
                      comment_every=0)
    services = BotServices(database, lambda _name, _inst: tracker, RepoSource(local={key: repo.root}),
                           bot_login="perfbot", fixes=FixFlow(database, queue.enqueue), bench=bench)
    worker = Worker(queue, lambda event: handlers.dispatch(event, services), owner="test", lease_seconds=60,
                    max_attempts=1)
    services.reports.sync_and_mirror(key, None, None)
    run_id = services.context.fixes.request_run(key, "perf_boxed_sum", base=heads["old-slow"], head=heads["old-fast"],
                                                purpose=bench_inputs.FIX, installation_id=None,
                                                options=RunOptions(samples=12))
    assert [d["id"] for d in queue.listing()] == [f"bench-{run_id}"] and worker.run_once()
    run = bench_store.get_run(database, run_id)
    assert run.status == "done" and run.verdict == "pass", run.message
    base, head = run.result.sides
    assert (base.sha, base.decision, head.sha) == (heads["old-slow"], "fail", heads["old-fast"])
    for old in ("old-slow", "old-fast"):
        assert (tmp_path / "bench" / "worktrees" / heads[old] / "build.log").read_text() == f"{heads[old]} U24_MASK\n"


def queued(slug: str, head: str, options: dict) -> BenchRun:
    """A queued claim run as the store hands it to bench_inputs.for_run."""
    return BenchRun(id=1, repo="o/r", slug=slug, purpose=Purpose.REPRODUCE, status=RunStatus.QUEUED, head=head,
                    options=RunOptions.from_json(options))
