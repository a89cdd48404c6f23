"""Drafts: agents lint and dedup a report before they place it; only devs/issues/ is ever synced."""
from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from sqlalchemy import select

from bot.adapters.store.models import Record
from bot.cli import main
from tests.gitrepo import sync_repo
from tests.reports import canonical_report

OLD = canonical_report("perf_u24_mul_slow", title="u24 multiply boxes values", root_cause="u24 OPE boxing.")


@pytest.fixture
def run(tmp_path, monkeypatch):
    monkeypatch.setenv("PERFBOT_INSTANCE_DIR", str(tmp_path / "instance"))
    monkeypatch.delenv("PERFBOT_DATABASE_URL", raising=False)
    runner = CliRunner()
    return lambda *args: runner.invoke(main, list(args), catch_exceptions=False)


def test_a_draft_in_any_folder_lints_clean_with_a_note_where_it_must_go(run, tmp_path):
    draft = tmp_path / "drafts" / "perf_u24_again.md"
    draft.parent.mkdir()
    draft.write_text(OLD.replace("perf_u24_mul_slow", "perf_u24_again"))
    result = run("lint", str(draft))
    assert result.exit_code == 0
    assert "note [draft-location]" in result.output and "move it to devs/issues/perf_u24_again.md" in result.output
    assert result.output.rstrip().endswith("0 error(s), 0 warning(s), 1 note(s)")


def test_a_draft_is_still_judged_by_its_slug_shape(run, tmp_path):
    draft = tmp_path / "perf-U24 again.md"
    draft.write_text(OLD)
    findings = json.loads(run("lint", "--format", "json", str(draft)).output)
    assert [(f["rule"], f["severity"]) for f in findings] == [("file-name", "error")]
    assert "perf_u24_again.md" in findings[0]["remedy"]


def test_dedup_of_a_draft_outside_the_repository_uses_the_checkout_it_runs_in(run, git_repo, tmp_path, monkeypatch):
    git_repo.write("devs/issues/perf_u24_mul_slow.md", OLD).commit("old report")
    draft = tmp_path / "elsewhere" / "perf_u24_again.md"
    draft.parent.mkdir()
    draft.write_text(OLD.replace("perf_u24_mul_slow", "perf_u24_again"))
    monkeypatch.chdir(git_repo.root)
    result = run("dedup", str(draft))
    assert result.exit_code == 3 and "perf_u24_again vs perf_u24_mul_slow" in result.output
    monkeypatch.chdir(tmp_path / "elsewhere")
    refused = run("dedup", str(draft))
    assert refused.exit_code == 2 and "pass --repo PATH" in refused.output


def test_dedup_of_a_draft_inside_the_repository_but_outside_devs_issues(run, git_repo, monkeypatch):
    git_repo.write("devs/issues/perf_u24_mul_slow.md", OLD).commit("old report")
    draft = git_repo.root / "drafts" / "perf_u24_again.md"
    draft.parent.mkdir()
    draft.write_text(OLD.replace("perf_u24_mul_slow", "perf_u24_again"))
    monkeypatch.chdir(git_repo.root.parent)
    assert run("dedup", str(draft)).exit_code == 3


def test_sync_reads_nothing_outside_devs_issues_even_committed_drafts(database, git_repo):
    git_repo.write("drafts/perf_u24_again.md", OLD).write("devs/drafts/perf_other.md", OLD)
    git_repo.write("devs/issues/drafts/perf_nested.md", OLD)
    git_repo.write("devs/issues/perf_u24_mul_slow.md", OLD).commit("a report and three drafts")
    sync_repo(database, git_repo)
    with database.session() as session:
        assert [r.path for r in session.scalars(select(Record))] == ["devs/issues/perf_u24_mul_slow.md"]


def test_dedup_of_a_draft_stores_no_verdict_and_says_what_the_causes_share(run, git_repo, tmp_path, monkeypatch):
    from bot.adapters.store.engine import Database
    from bot.adapters.store.service_models import LlmAnswer

    db_url = f"sqlite:///{tmp_path / 'store.db'}"
    boxed = OLD.replace("u24 OPE boxing.", "`box_u24` boxes the product, in runtime/u24.c, before `ope_mul`.")
    git_repo.write("devs/issues/perf_u24_mul_slow.md", boxed).commit("old report")
    assert run("sync", "--repo", str(git_repo.root), "--db", db_url).exit_code == 0
    draft = tmp_path / "elsewhere" / "perf_u24_again.md"
    draft.parent.mkdir()
    draft.write_text(OLD.replace("perf_u24_mul_slow", "perf_u24_again").replace(
        "u24 OPE boxing.", "`box_u24` boxes every u24 product before `ope_mul` reads it."))
    result = run("dedup", "--repo", str(git_repo.root), "--db", db_url, str(draft))
    assert result.exit_code == 3, result.output
    assert "both root causes blame " in result.output and "in files none" not in result.output, result.output
    assert "rare root-cause places" in result.output and " places 0.00" not in result.output
    database = Database(db_url)
    with database.session() as session:
        assert session.scalars(select(LlmAnswer)).all() == []  # the draft is no partner of any record
    database.dispose()
    backlog = run("dedup", "--all", "--repo", str(git_repo.root), "--db", db_url)
    assert backlog.exit_code == 0, backlog.output  # one report: nothing to pair, nothing stored either way
