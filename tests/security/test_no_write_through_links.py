"""perfbot never writes through a link it did not make: not one a commit carries, not one a program planted.

Each probe goes in as an attacker would (a push to main and a fork PR verified on a writer's comment, through the
service; a report's program that plants links for the next verification, locally and on an ssh bench host; the
Actions bench script) and ends by looking at the
canary: a file whose content must not change and a path that must not come to exist.
"""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from bot.adapters.runners import LocalRunner
from bot.core.config import parse_repo_config
from bot.core.reports.parse import parse
from bot.core.verify.bench_run import BenchRun, RunOptions
from bot.core.verify.vocabulary import Purpose, RunStatus
from bot.services.bench.verify import verify
from tests.bench_project import CONFIG, TRANSLATION, build_project, report
from tests.verify.test_ssh_runner import _runner as ssh_runner

CANARY = "CANARY: perfbot must never write here\n"


@pytest.fixture
def canary(tmp_path):
    """A file that must keep its content and a path that must stay absent, outside everything perfbot owns."""
    folder = tmp_path / "canary"
    folder.mkdir()
    (folder / "file").write_text(CANARY)
    return folder


def _untouched(canary: Path) -> None:
    assert (canary / "file").read_text() == CANARY
    assert sorted(p.name for p in canary.iterdir()) == ["file"], "perfbot created a file through a link"


def _link(repo, path: str, target: Path) -> None:
    """Commit `path` as a symbolic link to `target` (git keeps it a link, and a checkout makes it one)."""
    where = repo.root / path
    where.parent.mkdir(parents=True, exist_ok=True)
    os.symlink(target, where)
    repo.repo.git.add("--", path)


# The report's C translation, hostile: besides its work it plants a link in its run folder under the names
# perfbot writes there after its program is in place (the translation, the old build marks), so that the next
# verification would write the report's C into the canary. (Replacing the program itself only spoils this run.)
PLANTING = TRANSLATION.replace("int main(void) {", """#include <unistd.h>
int main(void) {
  const char *names[] = {"translation.c", ".perfbot-built", ".perfbot-recipe"};
  for (int i = 0; i < 3; i++) { unlink(names[i]); symlink(CANARY_PATH, names[i]); }
""")


@pytest.fixture(params=["local", "ssh"])
def project(request, tmp_path, canary, sshd):
    repo, heads = build_project(tmp_path / "runtime")
    config = parse_repo_config(CONFIG)
    if request.param == "ssh":
        runner = ssh_runner(sshd, f"plant-{tmp_path.name}", repo_path=repo.root, build=config.build.argv,
                            memory_mb=config.verify.memory_mb)
        yield heads, config, runner
        runner.close()
    else:
        yield heads, config, LocalRunner("local", repo.root, tmp_path / "cache", build=config.build.argv,
                                         memory_mb=config.verify.memory_mb)


def test_a_program_cannot_plant_a_link_for_the_next_verification(project, canary):
    heads, config, runner = project
    text = report().replace(TRANSLATION, PLANTING.replace("CANARY_PATH", json.dumps(str(canary / "file"))))
    assert text != report()
    record = parse("devs/issues/perf_boxed_sum.md", text.encode()).record
    first = verify(record, config, runner, heads["fix/perf_boxed_sum"])
    assert first.verdict == "pass", first.message  # measured as if nothing happened: the links went unused
    _untouched(canary)
    second = verify(record, config, runner, heads["fix/perf_boxed_sum"])  # the same workspace, built
    _untouched(canary)
    assert second.verdict == "pass", second.message
    runs = runner.cache_dir / "runs" if isinstance(runner, LocalRunner) else Path(runner.root() / "runs")
    assert not runs.exists(), "a run folder outlived its benchmark"  # (the ssh "bench host" is this machine)


def test_write_file_writes_only_into_a_run_folder_it_made(project, canary):
    heads, _, runner = project
    workspace = runner.prepare(heads["main"])
    folder = runner.run_dir(workspace, "perf_boxed_sum")
    assert folder != runner.run_dir(workspace, "perf_boxed_sum"), "a run folder was handed out twice"
    from bot.errors import UserError

    for elsewhere in (workspace / "program.bend", workspace / ".perfbot-run" / "perf_boxed_sum" / "p.bend",
                      folder.parent / "p.bend"):
        with pytest.raises(UserError, match="not in a run folder"):
            runner.write_file(elsewhere, "sum 1\n")
    # A link already in the folder (a program's) is replaced by the file, never followed.
    planted = runner.run(["ln", "-s", str(canary / "file"), "p.bend"], folder, 10)
    assert planted.ok, planted.stderr
    runner.write_file(folder / "p.bend", "sum 1\n")
    assert runner.run(["cat", "p.bend"], folder, 10).stdout == "sum 1\n"
    _untouched(canary)


def test_the_actions_bench_script_ignores_committed_marks_and_links(tmp_path, canary):
    """The same probe against deploy/github/perfbot_bench.py on a self-hosted runner: a committed
    .perfbot-built used to skip the build, and .perfbot-run/<slug>/program.bend was written through."""
    import subprocess
    import sys

    from bot.adapters.git import GitRepository
    from bot.adapters.runners.actions import dispatch_inputs
    from bot.core.config import Runner
    from bot.services.bench import bench_inputs
    from tests.bench_project import PLAIN_CONFIG

    repo, _ = build_project(tmp_path / "runtime")
    repo.repo.git.checkout("-q", "main")
    repo.write(".perfbot.toml", PLAIN_CONFIG).write("devs/issues/perf_boxed_sum.md", report(counted=False))
    for name, target in ((".perfbot-built", canary / "file"),
                         (".perfbot-run/perf_boxed_sum/program.bend", canary / "file"),
                         (".perfbot-run/perf_boxed_sum/translation.c", canary / "new")):
        _link(repo, name, target)
    head = repo.commit("links where the bench script used to write")
    run = BenchRun(id=7, repo="o/r", slug="perf_boxed_sum", purpose=Purpose.REPRODUCE, status=RunStatus.QUEUED,
                   head=head, options=RunOptions(samples=2))
    git_repo = GitRepository(repo.root)
    try:
        config, record = bench_inputs.for_run(git_repo, run)
    finally:
        git_repo.close()
    inputs = dispatch_inputs(run, record, config, Runner(name="gpu", kind="actions", labels=("c",),
                                                         runs_on=("self-hosted",)))
    checkout, out = tmp_path / "checkout", tmp_path / "samples.json"
    subprocess.run(["git", "clone", "-q", str(repo.root), str(checkout)], check=True)
    script = Path(__file__).resolve().parents[2] / "deploy" / "github" / "perfbot_bench.py"
    env = {**os.environ, "PERFBOT_PLAN": inputs["plan"], "PERFBOT_OUT": str(out), "RUNNER_TEMP": str(tmp_path)}
    subprocess.run([sys.executable, str(script)], cwd=checkout, env=env, check=True, timeout=300)
    result = json.loads(out.read_text())
    _untouched(canary)
    assert result["error"] is None, result["error"]  # built despite the mark, measured despite the links
    assert [(s["side"], s["output"], len(s["c_seconds"])) for s in result["sides"]] == [("head", "4463072", 2)]


def test_links_a_push_and_a_fork_pr_commit_are_never_written_through(github, tmp_path, canary):
    """The probes of issue 38, through the service's entry points: `.perfbot-run/<slug>/program.bend -> /a/file`
    pushed to main made perfbot overwrite the file with the report's program, and a fork PR created a new file
    once a writer asked `/perf verify`. Here main carries a link to the canary under every name perfbot once
    wrote in a checkout, and a fork's head makes the whole `.perfbot-run` a link to the canary's folder. The push
    is synced, the fork PR attached (never built unasked), and a writer's comment measures base and head: nothing
    is written through a link. (One store: what is probed is the runner's writes.)"""
    import handlers
    from bot.adapters.store.bench import bench_store
    from bot.adapters.store.engine import Database
    from bot.services.worker import Event
    from tests.flows import github_bot
    from tests.verify.test_fix_pull_requests import REPO, pull_event
    from tests.webhooks import comment_payload

    github.add_repo(REPO)
    remote, heads = build_project(tmp_path / "remotes" / "team" / "runtime.git")
    remote.repo.git.checkout("-q", "main")
    for name, target in ((".perfbot-run/perf_boxed_sum/program.bend", canary / "file"),
                         (".perfbot-run/perf_boxed_sum/translation.c", canary / "new"),
                         (".perfbot-built", canary / "file"), (".perfbot-recipe", canary / "built")):
        _link(remote, name, target)
    heads["main"] = remote.commit("links where perfbot used to write")
    remote.repo.git.checkout("-q", "--detach", heads["fix/perf_boxed_sum"])
    remote.repo.git.merge("-q", "--no-edit", "main")
    remote.repo.git.rm("-r", "-q", ".perfbot-run")
    _link(remote, ".perfbot-run", canary)
    fork = remote.commit("a fork's fix, its run folder itself a link")
    remote.repo.git.update_ref("refs/pull/2/head", fork)  # where GitHub keeps a fork's head in the base repository
    remote.repo.git.checkout("-q", "main")
    remote.repo.git.branch("-D", "fix/perf_boxed_sum")
    database = Database(f"sqlite:///{tmp_path / 'perfbot.sqlite3'}")
    try:
        with github_bot(github, database, tmp_path) as (services, worker, _queue):
            services.reports.sync_and_mirror(REPO, None, None)
            github.add_pull(REPO, head_ref="fix", head_sha=fork, base_ref="main", base_sha=heads["main"],
                            body="Fixes perf_boxed_sum", user="someone")
            opened = pull_event(github, {**heads, "fix/perf_boxed_sum": fork}, "opened", fork=True, branch="fix")
            assert handlers.dispatch(opened, services) == []
            assert not worker.run_once()  # a fork's head is never built unasked
            github.set_permission(REPO, "wendy", "write")
            body = "/perf verify perf_boxed_sum"
            payload = comment_payload(REPO, 2, github.add_comment(REPO, 2, body, user="wendy"), body, "wendy",
                                      pull=True)
            assert handlers.dispatch(Event("issue_comment", "created", "c-1", payload, REPO, None), services) == []
            assert worker.run_once()
        run = bench_store.get_run(database, 1)
    finally:
        database.dispose()
    assert (run.verdict, run.head, run.base) == ("pass", fork, heads["main"]), run.message  # as if no link were there
    _untouched(canary)
    bench = tmp_path / "bench"
    assert (bench / "worktrees" / heads["main"] / ".perfbot-run" / "perf_boxed_sum" / "program.bend").is_symlink()
    assert (bench / "worktrees" / fork / ".perfbot-run").is_symlink()  # the links are still there, unused
    assert (bench / "built" / heads["main"]).is_file() and (bench / "built" / fork).is_file()
    assert not (bench / "runs").exists(), "a run folder outlived its benchmark"
