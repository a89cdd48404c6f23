"""Report code that tries to escape its run folder is contained by the local runner's bubblewrap sandbox.

The same program run uncontained does escape (the control at the end), so every refusal seen here is the
sandbox's doing. Skipped, with the reason, where bwrap cannot work; scripts/ensure-bwrap installs it.
"""
from __future__ import annotations

import os
import shutil
import socket
import tempfile
import time
import uuid
from pathlib import Path

import pytest

from bot.adapters.runners.local import LocalRunner
from bot.adapters.runners.sandbox import sandbox_problem
from tests.gitrepo import RepoBuilder

ESCAPE = r"""
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static void report(const char *what, int done) { printf("%s: %s\n", what, done ? "DONE" : strerror(errno)); }

static int write_file(const char *path) {
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) return 0;
  int done = write(fd, "escaped\n", 8) == 8;
  close(fd);
  return done;
}

/* escape PARENT_FILE TMP_FILE VICTIM PORT SECRET_FILE PROBE */
int main(int argc, char **argv) {
  if (argc != 7) return 2;
  report("write-parent", write_file(argv[1]));
  report("write-abs", write_file(argv[2]));
  report("delete", unlink(argv[3]) == 0);
  report("truncate", open(argv[3], O_WRONLY | O_TRUNC) >= 0);
  int s = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in to = {0};
  to.sin_family = AF_INET; to.sin_port = htons(atoi(argv[4])); to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  report("connect", s >= 0 && connect(s, (struct sockaddr *)&to, sizeof to) == 0);
  report("write-own", write_file("inside.txt"));
  report("write-tmp", write_file(argv[6]));
  char secret[64] = "";
  FILE *f = fopen(argv[5], "r");
  if (f) { if (!fgets(secret, sizeof secret, f)) secret[0] = 0; fclose(f); }
  secret[strcspn(secret, "\n")] = 0;
  printf("secret-file: [%s]\n", secret);
  const char *token = getenv("PERFBOT_GITHUB_TOKEN");
  printf("secret-env: [%s]\n", token ? token : "");
  return 0;
}
"""
# Leaves a child in a session of its own, out of reach of a kill of the run's process group.
LINGER = r"""
#include <unistd.h>
int main(int argc, char **argv) {
  if (fork() == 0) { setsid(); execlp("sleep", "sleep", argv[1], (char *)0); }
  for (;;) pause();
}
"""


@pytest.fixture(scope="module")
def bench(tmp_path_factory):
    problem = sandbox_problem()
    if problem is not None:
        pytest.skip(f"no sandbox in this environment: {problem}")
    # Outside /tmp, which the sandbox replaces with a private one: here read-only is what must refuse writes.
    base = Path(tempfile.mkdtemp(prefix="perfbot-sandbox-test-", dir="/var/tmp")).resolve()
    repo = RepoBuilder(base / "project")
    sha = repo.write("keep.txt", "keep me\n").write("escape.c", ESCAPE).write("linger.c", LINGER).commit("project")
    yield base, repo, sha
    shutil.rmtree(base, ignore_errors=True)


def _runner(base: Path, repo: RepoBuilder, **kwargs) -> LocalRunner:
    return LocalRunner("local", repo.root, base / "cache", build=None, memory_mb=256, **kwargs)


def _attempt(runner: LocalRunner, sha: str, tmp_path: Path, secret: Path, port: int, probe: str):
    workspace = runner.prepare(sha)
    folder = runner.run_dir(workspace, "perf_escape")
    compiled = runner.run(["gcc", "-O1", "-o", str(folder / "escape"), str(workspace / "escape.c")], folder, 60)
    assert compiled.ok, compiled.stderr
    targets = (workspace.parent / "escaped.txt", tmp_path / "escaped.txt", workspace / "keep.txt")
    result = runner.run([str(folder / "escape"), *map(str, targets), str(port), str(secret), probe], folder, 20)
    assert result.ok, result.stderr
    lines = dict(line.split(": ", 1) for line in result.stdout.splitlines())
    return workspace, folder, targets, lines


def test_report_code_cannot_write_delete_connect_or_read_secrets_outside_its_run_folder(
        bench, tmp_path, monkeypatch):
    base, repo, sha = bench
    secret = base / "app-key.pem"
    secret.write_text("SECRET-KEY\n")
    monkeypatch.setenv("PERFBOT_GITHUB_PRIVATE_KEY_FILE", str(secret))
    monkeypatch.setenv("PERFBOT_GITHUB_TOKEN", "secret-token")
    probe = f"/tmp/perfbot-probe-{uuid.uuid4().hex}"
    runner = _runner(base, repo, sandbox=True)
    with socket.create_server(("127.0.0.1", 0)) as listener:
        listener.settimeout(0.5)
        workspace, folder, targets, lines = _attempt(runner, sha, tmp_path, secret, listener.getsockname()[1], probe)
        with pytest.raises(TimeoutError):
            listener.accept()
    assert lines["write-parent"] == "Read-only file system" and not targets[0].exists()
    assert lines["write-abs"] == "No such file or directory" and not targets[1].exists()  # a private /tmp
    assert lines["delete"] == lines["truncate"] == "Read-only file system"
    assert targets[2].read_text() == "keep me\n"
    assert lines["connect"] in ("Connection refused", "Network is unreachable")
    assert lines["secret-file"] == "[]" and lines["secret-env"] == "[]"
    # What it may do: write its own folder, and a /tmp that vanishes with it.
    assert lines["write-own"] == lines["write-tmp"] == "DONE"
    assert (folder / "inside.txt").read_text() == "escaped\n" and not Path(probe).exists()

    # The control: the same program uncontained really escapes, so the refusals above are the sandbox's.
    loose = _runner(base, repo, sandbox=False)
    with socket.create_server(("127.0.0.1", 0)) as listener:
        listener.settimeout(5)
        try:
            _, _, _, lines = _attempt(loose, sha, tmp_path, secret, listener.getsockname()[1], probe)
            listener.accept()[0].close()
        finally:
            Path(probe).unlink(missing_ok=True)
    assert all(lines[k] == "DONE" for k in ("write-parent", "write-abs", "delete", "connect", "write-tmp"))
    assert lines["secret-file"] == "[SECRET-KEY]" and lines["secret-env"] == "[secret-token]"
    assert targets[0].exists() and not targets[2].exists()


def test_a_run_past_its_time_limit_leaves_nothing_behind(bench):
    base, repo, sha = bench
    runner = _runner(base, repo, sandbox=True)
    workspace = runner.prepare(sha)
    folder = runner.run_dir(workspace, "perf_linger")
    assert runner.run(["gcc", "-O1", "-o", str(folder / "linger"), str(workspace / "linger.c")], folder, 60).ok
    token = f"{time.time_ns() % 10**6 + 10**6}"  # a sleep length no other process on the machine uses
    result = runner.run([str(folder / "linger"), token], folder, 1)
    assert result.timed_out
    time.sleep(0.2)
    assert not [pid for pid in _pids() if _cmdline(pid) == ["sleep", token]], "a sandboxed process survived"


def test_memory_limits_hold_and_times_exclude_the_sandbox_setup(bench, tmp_path):
    base, repo, _ = bench
    hog = tmp_path / "hog.c"
    hog.write_text("#include <stdlib.h>\n#include <string.h>\nint main(void){char*p=malloc(1u<<30);"
                   "if(!p)return 3;memset(p,1,1u<<30);return 0;}\n")
    runner = LocalRunner("local", repo.root, base / "cache", build=None, memory_mb=64, sandbox=True)
    assert runner.run(["gcc", "-O0", "-o", str(tmp_path / "hog"), str(hog)], tmp_path, 60).ok
    assert runner.run([str(tmp_path / "hog")], tmp_path, 10).returncode == 3  # malloc refused under 64 MB
    started = time.perf_counter()
    result = runner.run(["sleep", "0.1"], tmp_path, 10)
    wall = time.perf_counter() - started
    assert result.ok and result.seconds >= 0.1 and wall - result.seconds > 0.003  # namespaces are not timed


def test_asking_for_a_sandbox_that_cannot_work_is_an_error(monkeypatch, tmp_path):
    from bot.adapters.runners import local
    from bot.errors import UserError

    monkeypatch.setattr(local, "sandbox_problem", lambda: "bwrap is not installed")
    with pytest.raises(UserError, match="sandbox was asked for but bwrap is not installed"):
        LocalRunner("local", tmp_path, tmp_path / "cache", build=None, sandbox=True)
    assert not LocalRunner("local", tmp_path, tmp_path / "cache", build=None).sandboxed


def _pids() -> list[int]:
    return [int(p) for p in os.listdir("/proc") if p.isdigit()]


def _cmdline(pid: int) -> list[str]:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace").split("\0")[:-1]
    except OSError:
        return []
