"""The ssh runner end to end: a real sshd on 127.0.0.1, the bench C project, real gcc, verify() as in production."""
from __future__ import annotations

import dataclasses
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path, PurePosixPath

import pytest

from bot.adapters.runners import LocalRunner, SshOptions, SshRunner, make_runner
from bot.adapters.runners.base import BuildError
from bot.core.config import parse_repo_config
from bot.core.config.instance import parse_instance_config
from bot.core.reports.parse import parse
from bot.errors import TransientError, UserError
from bot.services.bench.verify import MISMATCH, verify
from tests.bench_project import CONFIG, build_project, report
from tests.servers import free_port
from tests.sshd import keygen


def _runner(server, folder: str, *, repo_path: Path | None = None, known_hosts: Path | None = None,
            port: int | None = None, control: str = "ctl", **limits) -> SshRunner:
    """A runner on the test sshd; another `control` folder means a connection of its own (no shared master)."""
    options = SshOptions(server.client_key, known_hosts or server.known_hosts, server.root / control,
                         connect_timeout=5)
    return SshRunner("bench", "127.0.0.1", options=options, repo_path=repo_path or server.root,
                     port=port or server.port, path=str(server.root / folder), **limits)


@pytest.fixture(scope="module")
def project(sshd, tmp_path_factory):
    root = tmp_path_factory.mktemp("ssh-project")
    repo, heads = build_project(root / "runtime")
    config = parse_repo_config(CONFIG)
    runner = _runner(sshd, "remote", repo_path=repo.root, build=config.build.argv, memory_mb=config.verify.memory_mb)
    record = parse("devs/issues/perf_boxed_sum.md", report().encode()).record
    yield heads, config, runner, record, repo
    runner.close()


def test_a_real_fix_passes_on_the_bench_host(project):
    heads, config, runner, record, _ = project
    # Decided on the step count: the first 5 pairs settle it however busy the machine is. The base is left
    # out: its slow runs would add seconds for what test_verify already shows.
    outcome = verify(record, config, runner, heads["fix/perf_boxed_sum"])
    head = outcome.sides[-1]
    assert outcome.verdict == "pass" and head.interval.high <= 2.0, outcome.message
    assert head.output and len(head.language) == len(head.c) >= config.verify.min_samples
    # The commit arrived as a tar of its tree (no remote git), and stays built for the next benchmark.
    fix = heads["fix/perf_boxed_sum"]
    workspace = runner.prepare(fix)
    assert str(workspace).startswith(str(runner.root())) and workspace.name == fix
    # The build mark lives beside the checkout, never in it (a commit may carry a link by that name).
    assert Path(runner.root() / "built" / fix).is_file()  # the "host" is this machine
    assert runner.run(["test", "-e", ".perfbot-built"], workspace, 5).returncode == 1
    assert runner.run(["test", "-e", ".git"], workspace, 5).returncode == 1


def test_a_change_that_fixes_nothing_fails_on_the_bench_host(project):
    heads, config, runner, record, _ = project
    outcome = verify(record, config, runner, heads["not-a-fix"])
    assert outcome.verdict == "fail" and outcome.sides[-1].interval.low > 2.0, outcome.message


def test_a_change_that_breaks_the_output_is_caught_not_timed(project):
    heads, config, runner, record, _ = project
    outcome = verify(record, config, runner, heads["wrong-output"])
    assert outcome.verdict == MISMATCH and "prints" in outcome.message and outcome.sides[-1].language == []


def test_a_build_failure_and_a_timeout_give_clear_messages(project):
    heads, config, runner, record, _ = project
    with pytest.raises(BuildError, match=r"build gcc -O2 -o runtime runtime.c at .* on 127.0.0.1 exited 1"):
        verify(record, config, runner, heads["broken"])
    started = time.monotonic()
    outcome = verify(record, config.with_verify(timeout_seconds=1), runner, heads["hangs"])
    assert outcome.verdict == "error" and "ran past the 1s limit" in outcome.message
    # The program never ends, so returning at all means its remote group was killed; the bound only turns a
    # regression into a failure instead of a hung suite (the build over ssh alone took 20 s beside two busy loops).
    assert time.monotonic() - started < 180


def test_timing_is_the_programs_own_not_the_ssh_round_trip(project):
    _, _, runner, _, _ = project
    started = time.perf_counter()
    result = runner.run(["sleep", "0.2"], runner.root(), 5)
    wall = time.perf_counter() - started
    assert result.ok and 0.2 <= result.seconds < min(wall, 1.0)


def test_the_remote_folder_is_expanded_by_the_host_not_here(sshd, monkeypatch):
    monkeypatch.setenv("HOME", "/nonexistent-local-home")  # a local expansion would land here
    folder = f"~/.cache/perfbot-test-{uuid.uuid4().hex[:8]}"
    runner = SshRunner("bench", "127.0.0.1", options=SshOptions(sshd.client_key, sshd.known_hosts, sshd.root / "ctl"),
                       repo_path=sshd.root, port=sshd.port, path=folder)
    home = str(sshd.home)  # what sshd gives the remote user (tests/sshd.py sets it)
    try:
        assert str(runner.root()) == f"{home}/{folder[2:]}" and Path(home, folder[2:]).is_dir()
    finally:
        shutil.rmtree(Path(home, folder[2:]), ignore_errors=True)


def test_an_unknown_or_changed_host_key_is_refused_with_the_fix(sshd, tmp_path):
    empty = tmp_path / "known_hosts"
    empty.write_text("")
    with pytest.raises(UserError) as unknown:
        _runner(sshd, "never", known_hosts=empty, control="ctl-unknown").root()
    fix = f"add the host key of 127.0.0.1 to {empty} (ssh-keyscan -p {sshd.port} 127.0.0.1 >> {empty})"
    assert fix in str(unknown.value) and "fingerprint" in str(unknown.value)
    wrong, other = tmp_path / "wrong_hosts", tmp_path / "other"
    keygen(other)
    wrong.write_text(f"[127.0.0.1]:{sshd.port} {' '.join(Path(f'{other}.pub').read_text().split()[:2])}\n")
    with pytest.raises(UserError, match=r"does not match .*ssh-keygen -R '\[127.0.0.1\]:\d+'.*ssh-keyscan"):
        _runner(sshd, "never", known_hosts=wrong, control="ctl-wrong").root()
    with pytest.raises(UserError, match=r"no known_hosts file at .*ssh-keyscan"):
        _runner(sshd, "never", known_hosts=tmp_path / "missing", control="ctl-missing").root()
    assert not (sshd.root / "never").exists()  # nothing ran on the host


def test_a_refused_connection_is_a_transient_error(sshd):
    with pytest.raises(TransientError, match=r"cannot reach 127.0.0.1:\d+ over ssh: .*refused"):
        _runner(sshd, "never", port=free_port(), control="ctl-refused").root()


def test_hostile_slugs_and_arguments_never_reach_a_shell(project, tmp_path):
    heads, _, runner, _, _ = project
    workspace = runner.prepare(heads["main"])
    for slug in ("../../etc", "perf_x; touch /tmp/pwned", "perf_$(id)"):
        with pytest.raises(UserError, match="not a report slug"):
            runner.run_dir(workspace, slug)
    with pytest.raises(UserError, match="outside the folder"):
        runner.write_file(PurePosixPath("/tmp/perfbot-escaped"), "x")
    with pytest.raises(UserError, match="outside the folder"):
        runner.run_dir(workspace / ".." / ".." / ".." / "x", "perf_ok")
    with pytest.raises(UserError):
        SshRunner("bad", "127.0.0.1", options=runner.options, repo_path=tmp_path, path="~/../../etc")
    with pytest.raises(UserError):
        SshRunner("bad", "-oProxyCommand=touch", options=runner.options, repo_path=tmp_path)
    folder = runner.run_dir(workspace, "perf_boxed_sum")
    marker = tmp_path / "pwned"
    text = f"$(touch {marker}) `touch {marker}`; touch {marker} 'quote\" \\ \n line"
    runner.write_file(folder / "data.txt", text)
    assert runner.run(["cat", "data.txt"], folder, 5).stdout == text
    assert runner.run(["printf", "%s", text], folder, 5).stdout == text and not marker.exists()


def test_a_run_over_its_memory_limit_is_contained(project):
    heads, _, runner, _, _ = project
    folder = runner.run_dir(runner.prepare(heads["main"]), "perf_memory_hog")
    runner.write_file(folder / "hog.c", "#include <stdlib.h>\n#include <string.h>\nint main(void){"
                      "char*p=malloc(1u<<30);if(!p)return 3;memset(p,1,1u<<30);return 0;}\n")
    assert runner.run(["gcc", "-O0", "-o", "hog", "hog.c"], folder, 60).ok
    small = SshRunner("bench", runner.host, options=runner.options, repo_path=runner.repo_path, port=runner.port,
                      path=runner.folder, memory_mb=64)  # the same host and folder under a 64 MB cap
    result = small.run(["./hog"], folder, 10)
    assert result.returncode == 3 and not result.timed_out  # malloc refused under the cap, on the host


def test_one_benchmark_at_a_time_per_host_even_across_folders(sshd):
    first, second = _runner(sshd, "lock-a"), _runner(sshd, "lock-b")
    events: list[str] = []

    def contender() -> None:
        with second.exclusive():
            events.append("second in")

    with first.exclusive():
        waiting = threading.Thread(target=contender)
        waiting.start()
        time.sleep(1.0)  # ample time for the second to get in, were the lock not held
        events.append("first out")
    waiting.join(timeout=120)  # ssh sessions under a loaded host: generous, and no verdict hangs on it
    assert events == ["first out", "second in"]


def test_a_crashed_holder_frees_the_host(sshd):
    """Another process takes the lock and is killed with SIGKILL: its ssh session ends and the host is free."""
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(sshd.client_key), str(sshd.known_hosts),
                               str(sshd.root / "ctl"), str(sshd.port), str(sshd.root / "lock-c")],
                              stdout=subprocess.PIPE, cwd=Path(__file__).resolve().parents[2])
    assert holder.stdout.readline() == b"in\n"
    got_in = threading.Event()

    def contender() -> None:
        with _runner(sshd, "lock-d").exclusive():
            got_in.set()

    waiting = threading.Thread(target=contender)
    waiting.start()
    assert not got_in.wait(1.0)  # the other process holds the host
    os.kill(holder.pid, signal.SIGKILL)  # no cleanup runs: only its closed pipe tells the remote holder
    holder.wait()
    assert got_in.wait(120)  # the host frees at once; a loaded machine may be slow to show it
    waiting.join(timeout=30)


HOLDER = """import sys, time
from pathlib import Path
from bot.adapters.runners import SshOptions, SshRunner
key, known, control, port, folder = sys.argv[1:]
runner = SshRunner("holder", "127.0.0.1", options=SshOptions(Path(key), Path(known), Path(control)),
                   repo_path=Path("."), port=int(port), path=folder)
with runner.exclusive():
    print("in", flush=True)
    time.sleep(120)
"""


@pytest.fixture
def short_instance(monkeypatch):
    """An instance folder with a short path (the master socket lives under it), removed afterwards."""
    instance = Path(tempfile.mkdtemp(prefix="pbi-", dir="/tmp"))
    monkeypatch.setenv("PERFBOT_INSTANCE_DIR", str(instance))
    yield instance
    shutil.rmtree(instance, ignore_errors=True)


def test_the_verify_command_runs_on_the_ssh_runner_the_instance_names(sshd, short_instance, tmp_path,
                                                                     monkeypatch):
    from click.testing import CliRunner

    from bot.cli import main
    from bot.config import Settings

    monkeypatch.setenv("PERFBOT_SSH_KEY", str(sshd.client_key))
    monkeypatch.setenv("PERFBOT_SSH_KNOWN_HOSTS", str(sshd.known_hosts))
    repo, heads = build_project(tmp_path / "runtime")
    repo.repo.git.checkout("-q", "-b", "ssh-wrong", heads["wrong-output"])
    (short_instance / "perfbot.toml").write_text(f'[[runners]]\nname = "bench-ssh"\nkind = "ssh"\nhost = "127.0.0.1"\n'
                                                 f'port = {sshd.port}\npath = "{sshd.root}/cli"\nlabels = ["c"]\n')
    try:
        result = CliRunner().invoke(main, ["verify", "perf_boxed_sum", "--repo", str(repo.root), "--head",
                                           "ssh-wrong", "--runner", "bench-ssh", "--format", "json"])
    finally:  # the command's shared connection, closed now rather than after ControlPersist
        SshRunner("bench-ssh", "127.0.0.1", options=SshOptions.from_settings(Settings.from_env()),
                  repo_path=repo.root, port=sshd.port).close()
    assert result.exit_code == 1, result.output
    data = json.loads(result.output[result.output.index("{"):])
    assert (data["verdict"] == "output_mismatch" and data["runner"] == "bench-ssh"
            and (sshd.root / "cli" / "worktrees").is_dir())


def test_the_default_branchs_build_script_builds_an_older_checkout_on_the_host(sshd, tmp_path):
    from bot.adapters.git import GitRepository
    from bot.services.bench.bench_inputs import bench_config, source_of
    from tests.bench_project import build_history_project

    repo, heads = build_history_project(tmp_path / "runtime")
    git_repo = GitRepository(repo.root)
    try:
        config = bench_config(git_repo, source_of(git_repo))
    finally:
        git_repo.close()
    runner = _runner(sshd, "history", repo_path=repo.root, build=config.build.argv, build_script=config.build_script,
                     control="ctl-history")
    try:
        for commit, define in ((heads["old-slow"], "U24_MASK"), (heads["main"], "WORD_MASK")):
            workspace = runner.prepare(commit)  # the old commit has no .perfbot/: the script came from main
            assert runner.run(["cat", "build.log"], workspace, 5).stdout == f"{commit} {define}\n"
            folder = runner.run_dir(workspace, "perf_boxed_sum")
            runner.write_file(folder / "p.dl", "sum 1000\n")  # the demo runtime reads .dl programs
            assert runner.run([str(workspace / "runtime"), str(folder / "p.dl")], folder, 5).stdout.strip().isdigit()
        installed = runner.run(["find", str(runner.root() / "scripts"), "-name", "build.sh", "-perm", "-u+x"],
                               runner.root(), 5).stdout.split()
        assert len(installed) == 1 and installed[0].startswith(str(runner.root() / "scripts") + "/")
        changed = dataclasses.replace(config.build_script, text=config.build_script.text.replace('"$2 $mask"', '"v2"'))
        runner.build_script = changed  # another recipe: the commit is copied and built afresh on the host
        workspace = runner.prepare(heads["old-slow"])
        assert runner.run(["cat", "build.log"], workspace, 5).stdout == "v2\n"
    finally:
        runner.close()


def test_make_runner_builds_each_kind():
    operator = parse_instance_config('[[runners]]\nname = "l"\nkind = "local"\nlabels = ["c"]\n[[runners]]\n'
                                     'name = "x"\nkind = "ssh"\nhost = "h"\nlabels = ["c"]\n')[1]
    config = operator.narrow(parse_repo_config('[build]\ncommand = ["make"]\n'))
    local, remote = config.operator.runners
    options = SshOptions(Path("/k"), Path("/kh"), Path("/c"))
    made = make_runner(remote, Path("/r"), Path("/cache"), config, options)
    assert isinstance(made, SshRunner) and made.folder == "~/.cache/perfbot/x"
    assert made.memory_mb == config.verify.memory_mb
    assert made.build == config.build.argv and made.options is options and made.build_script is None
    assert isinstance(make_runner(local, Path("/r"), Path("/cache"), config, None), LocalRunner)
    with pytest.raises(UserError, match="no ssh settings"):
        make_runner(remote, Path("/r"), Path("/cache"), config, None)
    actions = parse_instance_config('[[runners]]\nname = "gpu"\nkind = "actions"\nlabels = ["cuda"]\n')[1].runners[0]
    with pytest.raises(UserError, match=r"runs on GitHub Actions.*/perf verify runner=gpu"):
        make_runner(actions, Path("/r"), Path("/cache"), config, None)


def test_a_par_sweep_on_the_bench_host_defaults_to_its_cores(sshd, tmp_path):
    import subprocess

    from bot.services.bench.sweep import counts_for
    from tests.sweep_project import REPORTS, SWEEP_CONFIG, build_sweep_project

    repo, heads = build_sweep_project(tmp_path / "runtime")
    config = parse_repo_config(SWEEP_CONFIG.replace("threads = [1, 2, 4]\n", ""))
    runner = _runner(sshd, "sweep", repo_path=repo.root, build=config.build.argv, control="ctl-sweep")
    record = parse("devs/issues/perf_balanced_items.md", REPORTS["perf_balanced_items"].encode()).record
    try:
        online = int(subprocess.run(["getconf", "_NPROCESSORS_ONLN"], capture_output=True, text=True).stdout)
        assert runner.cores() == online  # the host is this machine: its getconf, asked over ssh
        counts = counts_for(record, config, runner)
        assert counts == tuple(sorted({*range(1, online + 1), 2}))
        outcome = verify(record, config, runner, heads["main"])
        points = outcome.as_dict()["sides"][-1]["sweep"]["points"]
        assert outcome.verdict == "pass", outcome.message
        # Eight equal items split evenly over the claimed two threads: the span halves, exactly.
        assert [p["threads"] for p in points] == list(counts) and points[1]["speedup"]["point"] == 2.0
    finally:
        runner.close()
