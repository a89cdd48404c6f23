"""Issue 38's `[references]` probes through `perfbot verify`, the way a `.perfbot.toml` on main reaches a run: a
reference named by a path, by a `file://` URL into another installation's clone, or by an `http://` address
inside the bot's network. None is read or fetched: the path is refused at its line, the URLs before any
connection (a listening socket sees none), and no mirror of them is made."""
from __future__ import annotations

import socket

import pytest
from click.testing import CliRunner

from bot.cli import main
from tests.bench_project import CONFIG, build_project, report
from tests.gitrepo import RepoBuilder


@pytest.fixture
def project(tmp_path, monkeypatch):
    monkeypatch.setenv("PERFBOT_INSTANCE_DIR", str(tmp_path / "instance"))
    repo, _ = build_project(tmp_path / "runtime")
    repo.repo.git.checkout("-q", "main")
    text = report()
    assert text.startswith("---\n")
    repo.write("devs/issues/perf_boxed_sum.md", "---\nreference: old\n" + text[4:])
    return repo


def _verify(repo, repository: str):
    table = f'\n[references.old]\nrun = ["./runtime", "{{file}}"]\nrepository = "{repository}"\n'
    repo.write(".perfbot.toml", CONFIG + table).commit("compare with another runtime")
    result = CliRunner().invoke(main, ["verify", "perf_boxed_sum", "--repo", str(repo.root), "--format", "json"])
    return result, CONFIG.count("\n") + 4  # the line of `repository`


def test_a_reference_named_by_a_path_is_refused_at_its_line(project):
    result, line = _verify(project, "/srv/perfbot/instance/repos/other-org/secret")
    assert result.exit_code == 1, result.output
    assert f".perfbot.toml:{line}: references.old.repository:" in result.output and "never a path" in result.output


def test_no_url_the_operator_did_not_allow_is_fetched(project, tmp_path):
    other = RepoBuilder(tmp_path / "instance" / "repos" / "other-org" / "secret.git")
    other.write("SECRET", "another installation's private code\n").commit("private")
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    listener.setblocking(False)
    try:
        port = listener.getsockname()[1]
        for url in (f"file://{other.root}", f"http://127.0.0.1:{port}/internal.git"):
            result, _ = _verify(project, url)
            assert result.exit_code != 0 and "is not a source the operator allows" in result.output, result.output
            assert "another installation's private code" not in result.output
        with pytest.raises(BlockingIOError):
            listener.accept()  # the bot host never connected to the internal address
    finally:
        listener.close()
    assert not (project.root / ".git" / "perfbot-references").exists(), "a mirror was made"
    assert "[references] allow in the instance file" in result.output  # and says whose key would allow it
