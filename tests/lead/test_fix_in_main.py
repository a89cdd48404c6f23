"""A report whose `fix:` names a commit already merged into main: `perfbot verify` measures the fix against its own
parent (what the fix itself gained, not "already in base ... 1.00x"), the record says "fixed in main since
COMMIT" in every view, and the record's issue is brought in step by the same run."""
from __future__ import annotations

import json

from click.testing import CliRunner

from bot.cli import main
from tests.bench_project import build_project


def test_a_fix_already_in_main_is_measured_against_its_parent_and_said_fixed_in_main(tmp_path, monkeypatch):
    monkeypatch.setenv("PERFBOT_INSTANCE_DIR", str(tmp_path / "instance"))
    repo, heads = build_project(tmp_path / "runtime")
    fix = heads["fix/perf_boxed_sum"]
    repo.repo.git.merge("--no-ff", "-q", "-m", "Merge the fix", "fix/perf_boxed_sum")
    path = "devs/issues/perf_boxed_sum.md"
    text = (repo.root / path).read_text()
    repo.write(path, text.replace("fix: fix/perf_boxed_sum", f"fix: {fix[:7]}")).commit("the fix is in main")
    cli = CliRunner()
    assert cli.invoke(main, ["sync", "--repo", str(repo.root)]).exit_code == 0

    result = cli.invoke(main, ["verify", "perf_boxed_sum", "--repo", str(repo.root), "--format", "json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output[result.output.index("{"):])
    # against its parent (main before the fix), not against main, which already holds it
    assert (data["plan"]["base"], data["plan"]["head"]) == (heads["main"], fix)
    assert data["verdict"] == "fixed" and not data["already_in_base"] and data["gain"]["low"] > 1
    assert data["issue"].startswith("the issue of perf_boxed_sum is in step")

    listed = json.loads(cli.invoke(main, ["list", "--format", "json"]).output)
    [record] = [r for r in listed if r["slug"] == "perf_boxed_sum"]
    assert record["outcome"] == "fixed in main" and record["fixed_in_main"]
    assert record["standing"].startswith(f"fixed in main since {fix[:12]}: ")
    assert "the fix itself " in record["standing"] and " faster [" in record["standing"]
    shown = cli.invoke(main, ["show", "perf_boxed_sum"]).output
    assert f"standing  fixed in main since {fix[:12]}" in shown
    # the record's issue (local mode: the issues file) carries the same words and its label
    [state] = (tmp_path / "instance").glob("local-github/*/issues.json")
    issues = json.loads(state.read_text())
    [issue] = [i for i in issues["issues"].values() if "perf_boxed_sum" in i["title"]]
    assert "outcome: fixed in main" in issue["labels"] and f"fixed in main since {fix[:12]}" in issue["body"]


def test_the_service_measures_a_fix_named_in_main_against_its_parent_and_the_issue_says_so(tmp_path, database):
    from bot.adapters.store.bench import bench_store
    from tests.flows import local_bot

    repo, heads = build_project(tmp_path / "runtime")
    fix = heads["fix/perf_boxed_sum"]
    repo.repo.git.merge("--no-ff", "-q", "-m", "Merge the fix", "fix/perf_boxed_sum")
    path = "devs/issues/perf_boxed_sum.md"
    text = (repo.root / path).read_text()
    repo.write(path, text.replace("fix: fix/perf_boxed_sum", f"fix: {fix[:7]}")).commit("the fix is in main")
    key, _queue, tracker, services, worker = local_bot(database, repo.root, tmp_path)
    services.reports.sync_and_mirror(key, None, None)
    runs = [r for r in bench_store.runs_for(database, "perf_boxed_sum") if r.purpose == "fix"]
    assert [(r.base, r.head, r.options.in_main) for r in runs] == [(heads["main"], fix, True)]
    while worker.run_once():
        pass
    services.reports.sync_and_mirror(key, None, None)  # the same commit again: measured once
    assert len([r for r in bench_store.runs_for(database, "perf_boxed_sum") if r.purpose == "fix"]) == 1
    issues = json.loads(tracker.state_file.read_text())["issues"]
    [issue] = [i for i in issues.values() if i["body"].startswith("<!-- perfbot:record perf_boxed_sum -->")]
    assert "outcome: fixed in main" in issue["labels"] and f"fixed in main since {fix[:12]}" in issue["body"]
