"""The perfbot command line, driven through click and once as a real process."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from bot.cli import main
from tests.reading.test_lint import REFERENCE  # 1.6x slower than runtime v1
from tests.reports import canonical_report

PROJECT = Path(__file__).resolve().parents[2]


@pytest.fixture
def cli(tmp_path, monkeypatch):
    monkeypatch.setenv("PERFBOT_INSTANCE_DIR", str(tmp_path / "instance"))
    monkeypatch.delenv("PERFBOT_DATABASE_URL", raising=False)
    runner = CliRunner()

    def run(*args: str):
        return runner.invoke(main, list(args), catch_exceptions=False)

    return run


def test_lint_is_clean_on_the_example_reports(cli):
    result = cli("lint", str(PROJECT / "devs" / "issues"))
    assert result.exit_code == 0, result.output
    assert "0 error(s), 0 warning(s)" in result.output


def test_lint_names_file_line_rule_and_remedy_and_exits_1(cli, tmp_path):
    report = tmp_path / "devs" / "issues" / "perf_near_c.md"
    report.parent.mkdir(parents=True)
    report.write_text(canonical_report("perf_near_c", ratio=1.6))
    result = cli("lint", str(report))
    assert result.exit_code == 1
    assert f"{report}:5: error [seq-within-tolerance]" in result.output
    assert "fix:" in result.output


def test_lint_judges_a_reference_report_by_the_reference_factor_it_is_given(cli, tmp_path):
    report = tmp_path / "devs" / "issues" / "perf_slower_than_v1.md"
    report.parent.mkdir(parents=True)
    report.write_text(REFERENCE)
    assert cli("lint", str(report)).exit_code == 0
    result = cli("lint", "--reference-factor", "2", str(report))
    assert result.exit_code == 1 and "[reference-within-factor]" in result.output


def test_lint_json_is_an_array_of_findings(cli, tmp_path):
    report = tmp_path / "perf-bad name.md"
    report.write_text("# Only a title\n")
    result = cli("lint", "--format", "json", str(report))
    assert result.exit_code == 1
    findings = json.loads(result.output)
    assert {"file-name", "repro-missing", "c-translation-missing"} <= {f["rule"] for f in findings}
    assert all({"file", "line", "rule", "severity", "message"} <= set(f) for f in findings)
    assert {f["severity"] for f in findings} <= {"error", "warning"}


def test_lint_judges_supersedes_against_the_store_history(cli, git_repo, tmp_path):
    db_url = f"sqlite:///{tmp_path / 'store.sqlite3'}"
    git_repo.write("devs/issues/perf_old.md", canonical_report("perf_old")).commit("old finding")
    assert cli("sync", "--repo", str(git_repo.root), "--db", db_url).exit_code == 0
    draft = tmp_path / "draft" / "devs" / "issues" / "perf_new.md"  # outside any git repository
    draft.parent.mkdir(parents=True)
    draft.write_text(canonical_report("perf_new", supersedes=("perf_old",)))
    assert cli("lint", str(draft), "--db", db_url).exit_code == 0
    draft.write_text(canonical_report("perf_new", supersedes=("perf_ghost",)))
    result = cli("lint", str(draft), "--db", db_url)
    assert result.exit_code == 1 and "[supersedes-unknown]" in result.output and "perf_ghost" in result.output


@pytest.mark.parametrize("args", [("lint",), ("lint", "/no/such/file.md"), ("list", "--track", "gpu"),
                                  ("nosuchcommand",)])
def test_usage_errors_exit_2(cli, args):
    assert cli(*args).exit_code == 2


def test_new_scaffolds_reports_that_lint_clean(cli, tmp_path):
    folder = tmp_path / "devs" / "issues"
    for slug, track in (("deep_match", "seq"), ("tree_sum_gpu", "par")):
        result = cli("new", slug, "--track", track, "--dir", str(folder))
        assert result.exit_code == 0, result.output
    assert sorted(p.name for p in folder.iterdir()) == ["perf_deep_match.md", "perf_tree_sum_gpu.md"]
    assert cli("lint", str(folder)).exit_code == 0
    again = cli("new", "deep_match", "--track", "seq", "--dir", str(folder))
    assert again.exit_code == 1 and again.stderr.splitlines() == [
        f"error: {folder / 'perf_deep_match.md'} already exists", "fix: edit it, or pick another slug"]


@pytest.mark.parametrize("args", [("Bad-Slug", "--track", "seq"), ("x", "--track", "seq", "--ratio", "1.5"),
                                  ("x", "--track", "seq", "--backend", "cuda")])
def test_new_refuses_what_would_not_be_a_report(cli, tmp_path, args):
    result = cli("new", *args, "--dir", str(tmp_path))
    assert result.exit_code == 2 and not list(tmp_path.glob("*.md"))


def test_sync_list_show_round_trip(cli, git_repo, db_url):
    git_repo.write("devs/issues/perf_a.md", canonical_report("perf_a", ratio=3.0))
    git_repo.write("devs/issues/perf_b.md", canonical_report("perf_b", track="par", backend="cuda", threads=64,
                                                             ratio=7.5))
    git_repo.commit("two reports")
    result = cli("sync", "--repo", str(git_repo.root), "--db", db_url)
    assert result.exit_code == 0 and "snapshot" in result.output and "2 added" in result.output

    listed = json.loads(cli("list", "--format", "json", "--db", db_url).output)
    # neither is measured: listed apart by outcome and slug, never ranked by the larger claim
    assert [(r["slug"], r["track"], r["backend"], r["ratio"], r["state"], r["measured"]) for r in listed] == [
        ("perf_a", "seq", "c", 3.0, "open", None), ("perf_b", "par", "cuda", 7.5, "open", None)]
    assert [r["slug"] for r in json.loads(cli("list", "--format", "json", "--track", "seq", "--db",
                                              db_url).output)] == ["perf_a"]

    shown = cli("show", "perf_b", "--db", db_url)
    assert shown.exit_code == 0 and "history (1 revision(s))" in shown.output and "lints clean" in shown.output
    detail = json.loads(cli("show", "perf_b", "--format", "json", "--db", db_url).output)
    assert detail["history"][0]["author"] == "SEQ agent"
    nope = cli("show", "perf_nope", "--db", db_url)  # a refusal's two lines (bot/core/refusals.cli)
    assert nope.exit_code == 1 and nope.stderr.splitlines() == [
        "error: no record named 'perf_nope'", "fix: `perfbot list --state all` shows every record"]


def test_sync_to_a_ref_older_than_the_stored_head_says_so_and_changes_nothing(cli, git_repo, db_url):
    older = git_repo.write("devs/issues/perf_a.md", canonical_report("perf_a")).commit("a")
    git_repo.write("devs/issues/perf_b.md", canonical_report("perf_b")).commit("b")
    assert cli("sync", "--repo", str(git_repo.root), "--db", db_url).exit_code == 0
    result = cli("sync", "--repo", str(git_repo.root), "--ref", older, "--db", db_url)
    assert result.exit_code == 0 and f"note: {older[:12]} is not newer than the stored head" in result.output
    assert "up-to-date" in result.output
    listed = json.loads(cli("list", "--format", "json", "--db", db_url).output)
    assert sorted((r["slug"], r["state"]) for r in listed) == [("perf_a", "open"), ("perf_b", "open")]


BYLINE_REPORT = """# Tree sum stops at 3.8x on 8 threads

PAR · C backend · bench host mini-02

The runtime reaches only 3.8× at T8 on the fork-join tree sum.

```bend
def sum(d):
  if d == 0:
    return 1
  else:
    a b = sum(d - 1) sum(d - 1)
    return a + b
```

```c
static unsigned sum(unsigned d) { return d == 0 ? 1 : sum(d - 1) + sum(d - 1); }
```

Why: one global bump pointer.

Fix: unknown.
"""


def test_show_says_where_each_fact_not_in_front_matter_came_from(cli, git_repo, db_url):
    git_repo.write("devs/issues/perf_tree.md", BYLINE_REPORT).commit("a report as agents write it")
    assert cli("sync", "--repo", str(git_repo.root), "--db", db_url).exit_code == 0
    shown = cli("show", "perf_tree", "--db", db_url).output
    assert "host mini-02" in shown and "track par read from the byline on line 3: 'PAR'" in shown
    assert "ratio 2.11 derived from line 1: '3.8x on 8 threads' (8 / 3.8)" in shown  # the title states the claim
    detail = json.loads(cli("show", "perf_tree", "--format", "json", "--db", db_url).output)
    assert detail["derived"]["threads"].startswith("threads 8 read from line 1")
    assert [f["rule"] for f in detail["findings"]] == ["measurements-missing"]  # facts in prose: a warning only


def test_sync_errors_are_one_clear_line(cli, tmp_path):
    result = cli("sync", "--repo", str(tmp_path))
    assert result.exit_code == 1 and "not a git repository" in result.output
    bad_db = cli("list", "--db", "mysql+nodriver://x")
    assert bad_db.exit_code == 1 and "Error:" in bad_db.output


def test_the_installed_console_script_runs(tmp_path):
    perfbot = shutil.which("perfbot", path=str(PROJECT / ".venv" / "bin")) or shutil.which("perfbot")
    assert perfbot, "the perfbot console script is not installed; run ./test.sh"
    done = subprocess.run([perfbot, "lint", "--format", "json", str(PROJECT / "devs" / "issues")],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and json.loads(done.stdout) == []


def _loaded_after(args: list[str], instance) -> tuple[str, bool, bool]:
    """Run `perfbot ARGS` in a fresh interpreter (as the console script starts) with no API key: its exit code,
    and whether the anthropic SDK and alembic were imported."""
    probe = ("import sys\nfrom bot.cli import main\n"
             "try:\n    main(sys.argv[1:])\nexcept SystemExit as done:\n"
             "    print(done.code, 'anthropic' in sys.modules, 'alembic' in sys.modules)\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PERFBOT_", "ANTHROPIC_"))}
    done = subprocess.run([sys.executable, "-c", probe, *args], capture_output=True, text=True, timeout=60,
                          cwd=instance, env={**env, "PERFBOT_INSTANCE_DIR": str(instance)})
    code, sdk, alembic = done.stdout.split()[-3:]
    assert code == "0", done.stdout + done.stderr
    return code, sdk == "True", alembic == "True"


def test_offline_lint_and_sync_do_not_load_the_anthropic_sdk(tmp_path, git_repo):
    """Agents lint every report they write and sync often: offline, neither pays the SDK's second of imports,
    and lint without a store not alembic's either."""
    assert _loaded_after(["lint", "--format", "json", str(PROJECT / "devs" / "issues")], tmp_path) == ("0", False,
                                                                                                       False)
    git_repo.write("devs/issues/perf_a.md", canonical_report("perf_a")).commit("a report")
    synced = _loaded_after(["sync", "--repo", str(git_repo.root), "--db", f"sqlite:///{tmp_path / 's.db'}"], tmp_path)
    assert synced == ("0", False, True)
