"""What a report's code may see: an allow-list of folders, read as uid 65534, never a root-only file; and a
perfbot whose own files would be in that view does not start.

The uid tests need perfbot to run as root (the case issue 38 found open: the tree ran as uid 0 without
capabilities and read 0600 files); elsewhere the tree is perfbot's own uid and they are skipped.
"""
from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest
from click.testing import CliRunner

from bot.adapters.runners import LocalRunner, contain, make_runner, readable_problem
from bot.app.runtime import refuse_exposed
from bot.cli import main
from bot.config import ConfigError, Settings
from bot.core.config import parse_repo_config
from bot.core.config.instance import parse_instance_config
from bot.errors import UserError
from tests.gitrepo import RepoBuilder
from tests.verify.test_ssh_runner import _runner as ssh_runner

root_only = pytest.mark.skipif(os.geteuid() != 0, reason="the uid drop is what perfbot does as root")
READER = r"""
#include <stdio.h>
#include <unistd.h>
int main(int argc, char **argv) {
  printf("uid %d\n", (int)getuid());
  for (int i = 1; i < argc; i++) {
    char line[64] = "";
    FILE *f = fopen(argv[i], "r");
    if (f && fgets(line, sizeof line, f)) printf("%s: READ %s", argv[i], line); else printf("%s: refused\n", argv[i]);
    if (f) fclose(f);
  }
  return 0;
}
"""


@pytest.fixture(scope="module")
def shared():
    """A readable folder as an operator would name one, holding a root-only file and a public one, in a
    0700 folder of root's (as an ssh runner's remote folder under /root is)."""
    base = Path(tempfile.mkdtemp(prefix="perfbot-view-", dir="/var/tmp")).resolve()
    data = base / "datasets"
    data.mkdir()
    (data / "public.txt").write_text("PUBLIC\n")
    (data / "root-only.txt").write_text("ROOT-ONLY\n")
    (data / "root-only.txt").chmod(0o600)
    data.chmod(0o755)
    repo = RepoBuilder(base / "project")
    sha = repo.write("reader.c", READER).commit("a reader")
    base.chmod(0o700)
    yield base, data, repo, sha
    shutil.rmtree(base, ignore_errors=True)


@pytest.fixture(params=["local", "local-no-cgroup", "ssh", "ssh-no-cgroup"])
def runner(request, shared, sshd):
    base, data, repo, _ = shared
    cgroups = not request.param.endswith("no-cgroup")
    if request.param.startswith("ssh"):
        remote = ssh_runner(sshd, f"view-{request.param}", repo_path=repo.root, memory_mb=256, processes=32,
                            readable=(str(data),), cgroups=cgroups)
        os.chmod(sshd.root, 0o700)  # the remote folder lies in a 0700 folder: only root reaches it
        yield remote
        remote.close()
    else:
        yield LocalRunner("local", repo.root, base / "instance" / "bench", build=None, memory_mb=256, processes=32,
                          readable=(data,), cgroups=cgroups)


@root_only
def test_the_tree_runs_as_65534_and_reads_no_root_only_file_even_without_a_cgroup(runner, shared):
    """As root: before, the tree ran as uid 0 (and the ssh runner without a cgroup refused everything)."""
    _, data, _, sha = shared
    workspace = runner.prepare(sha)
    folder = runner.run_dir(workspace, "perf_reader")
    built = runner.run(["gcc", "-O1", "-o", str(folder / "reader"), str(workspace / "reader.c")], folder, 60)
    assert built.ok, built.stderr
    result = runner.run([str(folder / "reader"), str(data / "public.txt"), str(data / "root-only.txt"),
                         "/etc/shadow"], folder, 20)
    assert result.ok, result.stderr
    assert result.stdout.splitlines() == ["uid 65534", f"{data / 'public.txt'}: READ PUBLIC",
                                          f"{data / 'root-only.txt'}: refused", "/etc/shadow: refused"]
    # Its own folder, /tmp and /dev/shm are still the tree's to write (valgrind, semaphores need them).
    wrote = runner.run(["sh", "-c", "touch mine /tmp/t /dev/shm/s && ls -n mine"], folder, 20)
    assert wrote.ok and " 65534 " in wrote.stdout, wrote.stderr
    # bwrap's no_new_privs and nosuid mounts: a set-uid program of /usr gives nothing back
    su = shutil.which("su") or shutil.which("passwd")
    if su and os.stat(su).st_mode & 0o4000:
        regained = runner.run([su, "-c", "id -u"], folder, 20)
        assert "uid=0" not in regained.stdout and regained.stdout.strip() != "0"


@pytest.mark.parametrize("folder", ["/opt", "/srv", "/var", "/var/log", "/var/log/nginx", "/var/backups",
                                    "/etc/ssl", "/root/data", "/proc/1", "/", "relative/data", "/srv/../etc/x",
                                    "/tmp/shared", "/home/alice/data", "/var/lib/perfbot", "/var/lib/postgresql"])
def test_readable_is_an_allow_list_of_plain_folders_below_the_top(folder):
    assert readable_problem(folder) is not None
    assert contain.shown_problem(folder) is not None or folder != os.path.normpath(folder)


def test_readable_folders_that_may_be_shown(tmp_path):
    assert readable_problem("/srv/datasets") is None and readable_problem("/opt/toolchains/data") is None
    # /tmp is never shown, so the folders these tests show (and the instance beside them) live in /var/tmp
    if str(tmp_path).startswith("/tmp/"):
        assert "lies in /tmp" in readable_problem(tmp_path)
    base = Path(tempfile.mkdtemp(prefix="perfbot-shown-", dir="/var/tmp")).resolve()
    try:
        assert readable_problem(base / "datasets") is None
        instance = base / "instance"
        (instance / "bench").mkdir(parents=True)
        assert "perfbot's own files" in readable_problem(instance / "bench", (instance,))
        assert "perfbot's own files" in readable_problem(base, (instance,))  # it would show the instance
        link = base / "data-link"
        link.symlink_to(instance)
        assert "is a link to" in readable_problem(link, (instance,))
    finally:
        shutil.rmtree(base, ignore_errors=True)


def test_a_runner_refuses_a_readable_folder_the_allow_list_does_not_take(tmp_path):
    # the operator's instance file names the folder (a .perfbot.toml may not: sandbox keys are the operator's)
    config = parse_instance_config('[sandbox]\nreadable = ["/var/log"]\n\n[[runners]]\nname = "local"\n'
                                   'kind = "local"\nlabels = ["c"]\n')[1].narrow(parse_repo_config(""))
    with pytest.raises(UserError, match=r"\[sandbox\] readable: /var/log lies in /var/log"):
        make_runner(config.operator.runners[0], tmp_path, tmp_path / "cache", config, None)
    # The host that runs the code checks again (an ssh host's folders are its own).
    answer = contain.run({"argv": ["true"], "cwd": str(tmp_path), "timeout": 5, "memory_mb": 64,
                          "readable": ["/var/backups"]})
    assert "returncode" not in answer and "/var/backups lies in /var/backups" in answer["refused"]


def test_perfbot_does_not_start_where_the_sandbox_would_show_its_files(tmp_path, monkeypatch):
    under_usr = Path("/usr/share/perfbot-probe-instance")
    assert not under_usr.exists()
    monkeypatch.setenv("PERFBOT_INSTANCE_DIR", str(under_usr))
    monkeypatch.delenv("PERFBOT_GITHUB_TOKEN", raising=False)
    result = CliRunner().invoke(main, ["worker"])
    assert result.exit_code == 1 and "the instance folder (PERFBOT_INSTANCE_DIR) lies in /usr" in result.output
    assert not under_usr.exists(), "the refusal came after something was made there"
    fine = Settings(instance_dir=tmp_path / "instance", database_url="sqlite://")
    refuse_exposed(fine, environ={})
    with pytest.raises(ConfigError, match=r"PERFBOT_GITHUB_PRIVATE_KEY_FILE lies in /(etc|usr)"):
        refuse_exposed(fine, environ={"PERFBOT_GITHUB_PRIVATE_KEY_FILE": "/etc/localtime"})
    with pytest.raises(ConfigError, match=r"the ssh key \(PERFBOT_SSH_KEY\) lies in /srv/shared"):
        refuse_exposed(Settings(instance_dir=tmp_path, database_url="sqlite://", ssh_key=Path("/srv/shared/k")),
                       environ={}, readable=("/srv/shared",))


@pytest.mark.parametrize("readable, says", [  # one rule: the sandbox's allow-list, checked at start
    ("/opt", "/opt is a whole top-level folder"),
    ("/tmp/shared", "/tmp/shared lies in /tmp"),
    ("/home/alice/data", "/home/alice/data lies in /home"),
    ("/var/lib/postgresql", "/var/lib/postgresql lies in /var/lib"),
    ("/etc/ssl", "/etc/ssl lies in /etc"),
])
def test_the_instance_files_readable_folders_are_checked_when_perfbot_starts(tmp_path, monkeypatch, readable, says):
    instance = tmp_path / "instance"
    instance.mkdir()
    (instance / "perfbot.toml").write_text(f'[sandbox]\nreadable = ["{readable}"]\n')
    monkeypatch.setenv("PERFBOT_INSTANCE_DIR", str(instance))
    monkeypatch.delenv("PERFBOT_GITHUB_TOKEN", raising=False)
    result = CliRunner().invoke(main, ["worker"])
    assert result.exit_code != 0 and "readable" in result.output and says in result.output, result.output
    assert list(instance.iterdir()) == [instance / "perfbot.toml"], "the refusal came after something was made"
