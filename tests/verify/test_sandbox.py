"""A report's code is hostile: through the local and the ssh runner it sees nothing of perfbot's host, and the
limits of its whole process tree hold. Each attack is a real C program built in the sandbox it attacks.

The uncontained control at the end shows the same program does reach what it looks for, so every refusal
seen here is the sandbox's doing. scripts/ensure-bwrap installs bubblewrap: without it nothing runs (tested).
"""
from __future__ import annotations

import base64
import dataclasses
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import pytest

from bot.adapters.runners import LocalRunner, contain
from bot.errors import UserError
from tests.gitrepo import RepoBuilder
from tests.verify.test_ssh_runner import _runner as ssh_runner

HOSTILE = r"""
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>
extern char **environ;

static void peek(const char *path) {
  char line[128] = "";
  FILE *f = fopen(path, "r");
  if (!f) { printf("%s: %s\n", path, strerror(errno)); return; }
  if (!fgets(line, sizeof line, f)) line[0] = 0;
  fclose(f);
  line[strcspn(line, "\n")] = 0;
  printf("%s: READ %s\n", path, line);
}

int main(int argc, char **argv) {
  const char *mode = argv[1];
  if (!strcmp(mode, "read")) for (int i = 2; i < argc; i++) peek(argv[i]);
  if (!strcmp(mode, "env")) for (char **e = environ; *e; e++) printf("env %s\n", *e);
  if (!strcmp(mode, "unix")) {
    int s = socket(AF_UNIX, SOCK_STREAM, 0);
    struct sockaddr_un to = {0};
    to.sun_family = AF_UNIX;
    strncpy(to.sun_path, argv[2], sizeof to.sun_path - 1);
    printf("unix: %s\n", connect(s, (struct sockaddr *)&to, sizeof to) == 0 ? "CONNECTED" : strerror(errno));
  }
  if (!strcmp(mode, "bomb")) {
    int failures = 0;
    while (failures < 200) if (fork() < 0) failures++;
    return 0;
  }
  if (!strcmp(mode, "hog")) {  /* hog CHILDREN MB: each child holds MB of touched memory for a while */
    int children = atoi(argv[2]), done = 0;
    size_t bytes = (size_t)atoi(argv[3]) << 20;
    for (int i = 0; i < children; i++) if (fork() == 0) {
      char *p = malloc(bytes);
      if (!p) _exit(3);
      memset(p, 1, bytes);
      sleep(2);
      _exit(0);
    }
    for (int status; wait(&status) > 0;) done += WIFEXITED(status) && WEXITSTATUS(status) == 0;
    printf("held: %d\n", done);
  }
  if (!strcmp(mode, "flood")) {  /* 1 GiB on stdout */
    static char block[1 << 20];
    memset(block, 'x', sizeof block);
    for (int i = 0; i < 1024; i++) fwrite(block, 1, sizeof block, stdout);
  }
  if (!strcmp(mode, "linger")) {  /* a grandchild in a session of its own, asleep for good */
    if (fork() == 0) { setsid(); execlp("sleep", "sleep", argv[2], (char *)0); }
    printf("left behind\n");
  }
  return 0;
}
"""


@pytest.fixture(scope="module")
def host(tmp_path_factory):
    """An instance folder as production's /var/lib/perfbot holds it: a store, keys, another repository's clone,
    and this runner's worktrees inside it. Outside /tmp, which the sandbox replaces with a private one."""
    if (problem := contain.bwrap_problem()) is not None:
        pytest.fail(f"the sandbox must work where the suite runs (scripts/ensure-bwrap): {problem}")
    base = Path(tempfile.mkdtemp(prefix="perfbot-contain-", dir="/var/tmp")).resolve()
    base.chmod(0o700)  # as root, bwrap reaches a 0700 instance; the tree (uid 65534) never needs to
    instance = base / "instance"
    secrets = {"store": instance / "perfbot.sqlite", "key": instance / "ssh" / "id_ed25519",
               "clone": instance / "clones" / "other" / "private.txt", "home": Path.home() / ".perfbot-probe"}
    for name, path in secrets.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"SECRET-{name.upper()}\n")
    repo = RepoBuilder(base / "project")
    sha = repo.write("hostile.c", HOSTILE).commit("project")
    yield base, instance, secrets, repo, sha
    secrets["home"].unlink(missing_ok=True)
    shutil.rmtree(base, ignore_errors=True)


def _local(host, **options) -> LocalRunner:
    _base, instance, _, repo, _ = host
    return LocalRunner("local", repo.root, instance / "bench", build=None, **{"memory_mb": 512, "processes": 64,
                                                                             **options})


@pytest.fixture(params=["local", "local-fallback", "ssh"])
def runner(request, host, sshd):
    """One runner per way perfbot runs code: here with cgroup limits, here with the fallback limits (no
    cgroup: RLIMIT_NPROC in a user namespace of the tree's own, RLIMIT_AS), and over ssh."""
    if request.param == "ssh":
        remote = ssh_runner(sshd, "contain-remote", repo_path=host[3].root, memory_mb=512, processes=64)
        yield remote
        remote.close()
    else:
        yield _local(host, cgroups=request.param == "local")


def _built(runner, sha):
    workspace = runner.prepare(sha)
    folder = runner.run_dir(workspace, "perf_hostile")
    compiled = runner.run(["gcc", "-O1", "-o", str(folder / "hostile"), str(workspace / "hostile.c")], folder, 60)
    assert compiled.ok, compiled.stderr
    return folder


def test_report_code_reads_nothing_of_the_instance_the_home_or_the_environment(runner, host, monkeypatch):
    _, _instance, secrets, _, sha = host
    folder = _built(runner, sha)
    paths = [str(p) for p in secrets.values()] + ["/etc/shadow", "/etc/hostname"]
    result = runner.run([str(folder / "hostile"), "read", *paths], folder, 20)
    assert result.ok, result.stderr
    assert "READ" not in result.stdout and "SECRET" not in result.stdout
    assert all(f"{p}: No such file or directory" in result.stdout for p in paths), result.stdout
    environment = runner.run([str(folder / "hostile"), "env"], folder, 20).stdout
    names = {line.split()[1].split("=")[0] for line in environment.splitlines()}
    assert names <= {"PATH", "HOME", "TMPDIR", "LANG", "PWD"}, names


def test_report_code_reaches_no_socket_of_the_host(runner, host):
    base, *_, sha = host
    folder = _built(runner, sha)
    path = base / "bot.sock"
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as server:
        server.bind(str(path))
        server.listen()
        result = runner.run([str(folder / "hostile"), "unix", str(path)], folder, 20)
        path.unlink()
    assert result.stdout.strip() == "unix: No such file or directory"


def test_a_fork_bomb_stays_inside_its_process_limit(runner, host):
    *_, sha = host
    folder = _built(runner, sha)
    # The bomb's processes, each a fork of `hostile bomb`: counted by their command line, not by the host's
    # total, which the suite's other workers move at the same time.
    def bombs() -> int:
        return sum(_cmdline(pid)[-2:] == [str(folder / "hostile"), "bomb"] for pid in _pids())

    before, peak, running = bombs(), [0], threading.Event()

    def watch() -> None:  # the bomb's process count while it goes off
        while not running.is_set():
            peak[0] = max(peak[0], bombs())
            time.sleep(0.005)

    watcher = threading.Thread(target=watch)
    watcher.start()
    try:
        result = runner.run([str(folder / "hostile"), "bomb"], folder, 30)
    finally:
        running.set()
        watcher.join()
    assert before == 0 and 1 < peak[0] <= 64, (before, peak)  # 64: the runner's limit
    assert not result.timed_out
    if getattr(runner, "cgroups", True):  # a cgroup counts the refusals, so the verdict can name the limit
        assert result.limit == "processes" and "process limit" in result.failure("it", "here", 30, 512)


def test_the_memory_cap_holds_for_the_whole_tree(runner, host):
    *_, sha = host
    folder = _built(runner, sha)
    result = runner.run([str(folder / "hostile"), "hog", "8", "400"], folder, 60)
    if getattr(runner, "cgroups", True):
        assert result.limit == "memory" and not result.ok
        assert "hit the memory cap of 512 MB" in result.failure("the program", "at x", 60, 512)
    else:  # RLIMIT_NPROC x RLIMIT_AS: 8 children past a 6-process budget cannot all be there
        small = _local(host, cgroups=False, processes=6)
        held = small.run([str(folder / "hostile"), "hog", "8", "400"], folder, 60)
        assert 0 < int(held.stdout.split(": ")[1]) <= 6, held.stdout


def test_a_gigabyte_of_output_is_cut_and_perfbot_stays_small(runner, host, tmp_path):
    *_, sha = host
    folder = _built(runner, sha)
    result = runner.run([str(folder / "hostile"), "flood"], folder, 60)
    assert result.limit == "output" and result.ok and len(result.stdout) == 16 << 20
    assert "output past 16 MiB a stream was dropped" in result.stderr
    if isinstance(runner, LocalRunner) and runner.cgroups:
        # The same run in a process of its own, to see its peak memory: the 1 GiB never lands in perfbot.
        script = (f"from bot.adapters.runners import contain; r = contain.run({{'argv': "
                  f"['{folder / 'hostile'}', 'flood'], 'cwd': '{folder}', 'timeout': 60, 'memory_mb': 512}}); "
                  # VmHWM, not ru_maxrss: exec keeps the parent's high-water mark in the latter
                  "print(next(l.split()[1] for l in open('/proc/self/status') if l.startswith('VmHWM')))")
        peak_kb = int(subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True,
                                     cwd=Path(__file__).resolve().parents[2]).stdout)
        assert peak_kb < 200 * 1024, f"{peak_kb} KB"


def test_a_detached_grandchild_neither_holds_the_run_nor_survives_it(runner, host):
    *_, sha = host
    folder = _built(runner, sha)
    token = f"{time.time_ns() % 10**6 + 10**6}"  # a sleep length no other process on the machine uses
    result = runner.run([str(folder / "hostile"), "linger", token], folder, 30)
    assert result.ok and result.stdout == "left behind\n" and not result.timed_out
    time.sleep(0.2)
    assert not [pid for pid in _pids() if _cmdline(pid) == ["sleep", token]], "a sandboxed process survived"


def test_without_bubblewrap_nothing_runs(monkeypatch, tmp_path):
    monkeypatch.setattr(contain, "BWRAP", "bwrap-not-installed")
    contain.bwrap_problem.cache_clear()
    try:
        with pytest.raises(UserError,
                           match=r"only in a sandbox, and bwrap is not installed.*the operator installs") as refused:
            LocalRunner("local", tmp_path, tmp_path / "cache", build=None)
        assert "sandbox = " not in str(refused.value)  # a report's author is never told how to turn it off
        answer = contain.run({"argv": ["true"], "cwd": str(tmp_path), "timeout": 5, "memory_mb": 64})
        assert "nothing runs" in answer["refused"] and "returncode" not in answer
        assert "sandbox = " not in answer["refused"]
        odd = contain.run({"argv": ["true"], "cwd": str(tmp_path), "timeout": 5, "memory_mb": 64, "sandbox": "off"})
        assert "not 'off', so nothing runs" in odd["refused"] and "returncode" not in odd
    finally:
        contain.bwrap_problem.cache_clear()


def test_the_uncontained_control_does_reach_the_secrets(host, monkeypatch, caplog):
    """sandbox = "none" (a dedicated bench host's choice) is logged, and really is uncontained: the same
    program reads the instance's key. The environment is still a clean one."""
    _, _, secrets, _, sha = host
    monkeypatch.setenv("PERFBOT_GITHUB_TOKEN", "secret-token")
    loose = _local(host, sandbox="none")
    assert "UNCONTAINED" in caplog.text
    folder = _built(loose, sha)
    assert "READ SECRET-KEY" in loose.run([str(folder / "hostile"), "read", str(secrets["key"])], folder, 20).stdout
    assert "secret-token" not in loose.run([str(folder / "hostile"), "env"], folder, 20).stdout


def test_a_program_that_prints_a_secret_disguised_is_scrubbed_before_perfbot_reads_it(host, tmp_path):
    """Issue 38's probe: a report got perfbot to post its token reversed, past an exact-match scrub. Whatever a
    run prints passes the one scrub (reversed, base64, a piece of 12 characters) before anyone reads it."""
    token = "ghs_R3versedT0kenFromEnviron42"
    runner = _local(host, secrets=(token,))
    disguises = [token[::-1], base64.b64encode(f"GITHUB_TOKEN={token}".encode()).decode(), token[4:20]]
    printed = runner.run(["sh", "-c", "printf '%s\\n' " + " ".join(disguises)], tmp_path, 20)
    assert printed.ok and printed.stdout.count("\n") == 3
    for disguise in disguises:
        assert disguise not in printed.stdout


def test_readable_folders_are_shown_read_only(host, tmp_path):
    base, *_, sha = host
    shared = base / "datasets"
    shared.mkdir(exist_ok=True)
    (shared / "input.txt").write_text("big input\n")
    runner = _local(host, readable=(shared,))
    folder = _built(runner, sha)
    result = runner.run([str(folder / "hostile"), "read", str(shared / "input.txt")], folder, 20)
    assert result.stdout.strip().endswith("READ big input")
    touched = runner.run(["touch", str(shared / "new")], folder, 20)
    assert not touched.ok and "Read-only file system" in touched.stderr


def _pids() -> list[int]:
    return [int(p) for p in os.listdir("/proc") if p.isdigit()]


def _cmdline(pid: int) -> list[str]:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace").split("\0")[:-1]
    except OSError:
        return []


def test_the_timer_reports_on_its_own_clock(host, tmp_path):
    """Namespaces cost 7-20 ms a run; the timer inside times the program alone."""
    runner = _local(host)
    started = time.perf_counter()
    result = runner.run(["sleep", "0.1"], tmp_path, 10)
    wall = time.perf_counter() - started
    assert result.ok and result.seconds >= 0.1 and wall - result.seconds > 0.003
    assert json.loads(json.dumps(result.__dict__))["limit"] is None


def test_a_refused_allocation_names_the_cap_even_without_a_cgroup(host):
    """With a cgroup the limit is known (test above); without one, RLIMIT_AS refuses the allocation and the
    program's own words are all there is: the failure points at memory_mb."""
    *_, sha = host
    runner = _local(host, cgroups=False, memory_mb=64)
    folder = _built(runner, sha)
    result = runner.run(["python3", "-c", "import sys; b = bytearray(1 << 30)"], folder, 30)
    assert not result.ok and result.limit is None and "MemoryError" in result.stderr
    hint = "may have hit the memory cap of 64 MB a process: raise [verify] memory_mb"
    assert hint in result.failure("the program", "at x", 30, 64)
    assert hint in dataclasses.replace(result, stderr="ERROR: Memory allocation failed\n").failure(
        "the program", "at x", 30, 64)
    assert "memory" not in dataclasses.replace(result, stderr="segfault\n").failure("it", "at x", 30, 64)
