"""Sync from real multi-commit git repositories into the store, on SQLite and on PostgreSQL."""
from __future__ import annotations

import pytest
from sqlalchemy import select

import bot.services.reports.sync as sync_service
from bot.adapters.git import GitError, GitRepository
from bot.adapters.store.models import Record, Repo, Revision, SlugAlias
from tests.gitrepo import sync_repo
from tests.reports import canonical_report

A, B, C = (f"devs/issues/perf_{n}.md" for n in ("a", "b", "c"))


run_sync = sync_repo


def records(database) -> dict[str, Record]:
    with database.session() as session:
        return {r.slug: r for r in session.scalars(select(Record))}


def history(database, slug: str) -> list[tuple[str, str]]:
    """(change, commit message's sha) pairs of a record, oldest first."""
    with database.session() as session:
        record = session.scalar(select(Record).where(Record.slug == slug))
        revs = session.scalars(select(Revision).where(Revision.record_id == record.id)
                               .order_by(Revision.committed_at, Revision.id))
        return [(r.change, r.commit_sha) for r in revs]


def dump(database) -> list:
    """Every row of every table, to show a re-run changed nothing."""
    with database.session() as session:
        rows = []
        for model in (Repo, Record, Revision, SlugAlias):
            for obj in session.scalars(select(model).order_by(model.id)):
                rows.append({c.key: getattr(obj, c.key) for c in model.__table__.columns})
        return rows


def test_adds_and_edits_become_revisions_with_author_and_date(database, git_repo):
    first = git_repo.write(A, canonical_report("perf_a", ratio=3.0)).commit("add a", author="SEQ agent")
    git_repo.write(B, canonical_report("perf_b", track="par", backend="cuda", threads=32, ratio=6.0)).commit(
        "add b", author="PAR agent")
    summary = run_sync(database, git_repo)
    assert summary.mode == "snapshot" and summary.counts["added"] == 2
    third = git_repo.write(A, canonical_report("perf_a", ratio=5.0)).commit("a got worse")
    summary = run_sync(database, git_repo)
    assert summary.mode == "incremental" and dict(summary.counts) == {"modified": 1}

    recs = records(database)
    assert (recs["perf_a"].ratio, recs["perf_b"].backend, recs["perf_b"].threads) == (5.0, "cuda", 32)
    assert history(database, "perf_a") == [("added", first), ("modified", third)]
    with database.session() as session:
        authors = {r.author_name for r in session.scalars(select(Revision))}
    assert authors == {"SEQ agent", "PAR agent"}


def test_resyncing_unchanged_input_changes_nothing(database, git_repo):
    git_repo.write(A, canonical_report("perf_a")).commit("add a")
    git_repo.write(B, canonical_report("perf_b")).commit("add b")
    run_sync(database, git_repo)
    before = dump(database)
    again = run_sync(database, git_repo)
    assert again.mode == "up-to-date" and again.changed == 0
    replay = run_sync(database, git_repo, history=True)
    assert replay.mode == "history"
    assert dump(database) == before


def test_only_changed_reports_are_parsed(database, git_repo, monkeypatch):
    for i in range(20):
        git_repo.write(f"devs/issues/perf_r{i}.md", canonical_report(f"perf_r{i}"))
    git_repo.commit("twenty reports")
    run_sync(database, git_repo)
    parsed = []
    real_read = sync_service.read_report
    monkeypatch.setattr(sync_service, "read_report",
                        lambda path, data, *rest: parsed.append(path) or real_read(path, data, *rest))
    git_repo.write("devs/issues/perf_r7.md", canonical_report("perf_r7", ratio=8.0)).commit("edit one")
    run_sync(database, git_repo)
    assert parsed == ["devs/issues/perf_r7.md"]


def test_a_line_ending_only_change_is_not_a_new_revision(database, git_repo):
    text = canonical_report("perf_a")
    git_repo.write(A, text).commit("add a")
    run_sync(database, git_repo)
    git_repo.write(A, text.replace("\n", "\r\n").encode()).commit("windows editor")
    summary = run_sync(database, git_repo)
    assert dict(summary.counts) == {"unchanged": 1}
    assert len(history(database, "perf_a")) == 1


def test_renames_keep_the_record_and_its_history(database, git_repo):
    git_repo.write(A, canonical_report("perf_a")).commit("add a")
    run_sync(database, git_repo)
    moved = git_repo.rename(A, "devs/issues/perf_deep_match.md").commit("better name")
    summary = run_sync(database, git_repo)
    assert dict(summary.counts) == {"renamed": 1}
    recs = records(database)
    assert set(recs) == {"perf_deep_match"} and recs["perf_deep_match"].path == "devs/issues/perf_deep_match.md"
    assert [change for change, _ in history(database, "perf_deep_match")] == ["added", "renamed"]
    assert history(database, "perf_deep_match")[-1][1] == moved
    with database.session() as session:
        assert set(session.scalars(select(SlugAlias.slug))) == {"perf_a", "perf_deep_match"}


def test_delete_and_merge_commit_marks_old_records_merged_into_the_new_one(database, git_repo):
    git_repo.write(A, canonical_report("perf_a")).write(B, canonical_report("perf_b")).commit("two findings")
    run_sync(database, git_repo)
    merge = (git_repo.delete(A).delete(B)
             .write(C, canonical_report("perf_c", supersedes=("perf_a", "perf_b"))).commit("merge a and b into c"))
    summary = run_sync(database, git_repo)
    assert dict(summary.counts) == {"added": 1, "deleted": 2, "merged": 2}
    recs = records(database)
    assert {s: r.state for s, r in recs.items()} == {"perf_a": "merged", "perf_b": "merged", "perf_c": "open"}
    assert recs["perf_a"].merged_into_id == recs["perf_c"].id == recs["perf_b"].merged_into_id
    assert history(database, "perf_a")[-1] == ("merged", merge)
    with database.session() as session:
        new_rev = session.scalar(select(Revision).where(Revision.record_id == recs["perf_c"].id))
    assert not [f for f in new_rev.findings if f["rule"] == "supersedes-unknown"]


def test_a_plain_deletion_marks_the_record_deleted_and_a_re_add_revives_it(database, git_repo):
    git_repo.write(A, canonical_report("perf_a")).commit("add a")
    git_repo.delete(A).commit("not an issue after all")
    run_sync(database, git_repo, history=True)
    assert records(database)["perf_a"].state == "deleted"
    git_repo.write(A, canonical_report("perf_a", ratio=4.0)).commit("it is back")
    run_sync(database, git_repo)
    assert records(database)["perf_a"].state == "open"
    assert [c for c, _ in history(database, "perf_a")] == ["added", "deleted", "added"]


def test_history_backfills_every_revision_after_a_snapshot_sync(database, git_repo):
    shas = [git_repo.write(A, canonical_report("perf_a", ratio=r)).commit(f"ratio {r}") for r in (3.0, 4.0, 5.0)]
    run_sync(database, git_repo)
    assert history(database, "perf_a") == [("added", shas[2])]
    summary = run_sync(database, git_repo, history=True)
    assert summary.mode == "history"
    assert [sha for _, sha in history(database, "perf_a")] == shas
    assert records(database)["perf_a"].ratio == 5.0


def test_supersedes_is_judged_against_history(database, git_repo):
    git_repo.write(A, canonical_report("perf_a")).commit("old finding")
    git_repo.delete(A).write(B, canonical_report("perf_b", supersedes=("perf_a",))).commit("merged before perfbot")
    git_repo.write(C, canonical_report("perf_c", supersedes=("perf_ghost",))).commit("names a report nobody wrote")
    run_sync(database, git_repo)  # a snapshot: perf_a never reached the store, but git history knows it
    with database.session() as session:
        rules = {r.path: {f["rule"] for f in r.findings} for r in session.scalars(select(Revision))}
    assert "supersedes-unknown" not in rules[B]
    assert "supersedes-unknown" in rules[C]


def test_broken_reports_are_stored_with_their_findings(database, git_repo):
    git_repo.write(A, b"---\ntrack: [unclosed\n---\n# Broken\n\xff\xfe").commit("agent wrote garbage")
    run_sync(database, git_repo)
    record = records(database)["perf_a"]
    assert record.errors > 0 and record.state == "open"


def test_only_report_paths_are_read(database, git_repo):
    git_repo.write("devs/issues/README.md", "# not a report").write("devs/issues/perf-Bad.md", "x")
    git_repo.write("docs/perf_elsewhere.md", canonical_report("perf_elsewhere"))
    git_repo.write(A, canonical_report("perf_a")).commit("mixed")
    summary = run_sync(database, git_repo)
    assert set(records(database)) == {"perf_a"}
    assert sorted(summary.ignored) == ["devs/issues/README.md", "devs/issues/perf-Bad.md"]


def test_the_working_directory_is_never_read(database, git_repo):
    git_repo.write(A, canonical_report("perf_a", ratio=3.0)).commit("add a")
    (git_repo.root / A).write_text(canonical_report("perf_a", ratio=9.0))
    (git_repo.root / B).write_text(canonical_report("perf_b"))
    run_sync(database, git_repo)
    assert {s: r.ratio for s, r in records(database).items()} == {"perf_a": 3.0}


def test_a_rewritten_history_is_synced_from_what_was_seen_to_what_is_there(database, git_repo):
    base = git_repo.write(A, canonical_report("perf_a")).commit("add a")
    git_repo.write(B, canonical_report("perf_b")).commit("add b")
    run_sync(database, git_repo)
    git_repo.repo.head.reset(base, index=True, working_tree=True)
    git_repo.write(C, canonical_report("perf_c", track="par", backend="metal", threads=64,
                                       ratio=9.0)).commit("force-push")
    summary = run_sync(database, git_repo)
    assert summary.mode == "rewritten"
    assert {s: r.state for s, r in records(database).items()} == {"perf_a": "open", "perf_b": "deleted",
                                                                  "perf_c": "open"}


def test_sync_to_an_explicit_ref_and_bad_refs(database, git_repo):
    first = git_repo.write(A, canonical_report("perf_a")).commit("add a")
    git_repo.write(B, canonical_report("perf_b")).commit("add b")
    run_sync(database, git_repo, ref=first)
    assert set(records(database)) == {"perf_a"}
    for bad in ("--output=/tmp/x", "no-such-branch", "main..HEAD\n"):
        with pytest.raises(GitError):
            run_sync(database, git_repo, ref=bad)


def test_a_path_that_is_not_a_repository_is_a_clear_error(tmp_path):
    with pytest.raises(GitError, match="not a git repository"):
        GitRepository(tmp_path)


def test_a_report_added_edited_renamed_and_merged_within_one_sync_keeps_one_history(database, git_repo):
    """New records wait to be inserted in one batch; later commits of the same sync must still find them."""
    git_repo.write(B, canonical_report("perf_b")).commit("first finding")
    run_sync(database, git_repo)
    added = git_repo.write(A, canonical_report("perf_a", ratio=3.0)).commit("add a")
    edited = git_repo.write(A, canonical_report("perf_a", ratio=4.0)).commit("a got worse")
    renamed = git_repo.rename(A, "devs/issues/perf_z.md").commit("better name")
    merged = (git_repo.delete(B).write(C, canonical_report("perf_c", supersedes=("perf_b", "perf_z")))
              .delete("devs/issues/perf_z.md").commit("merge b and z into c"))
    summary = run_sync(database, git_repo)
    assert summary.mode == "incremental"
    assert history(database, "perf_z") == [("added", added), ("modified", edited), ("renamed", renamed),
                                           ("merged", merged)]
    recs = records(database)
    assert set(recs) == {"perf_b", "perf_z", "perf_c"}
    assert recs["perf_z"].merged_into_id == recs["perf_c"].id == recs["perf_b"].merged_into_id
    assert (recs["perf_z"].ratio, recs["perf_c"].state) == (4.0, "open")
    with database.session() as session:
        aliases = set(session.scalars(select(SlugAlias.slug)))
    assert aliases == {"perf_a", "perf_b", "perf_c", "perf_z"}


def _dies_after_the_first_transaction(monkeypatch):
    """sync's transactions from now on: the first commits, the second raises; returns how to undo it."""
    import bot.services.reports.sync as sync_module

    real_apply, applied = sync_module._apply_chunk, []

    def dies_after_the_first(*args, **kwargs):
        if applied:
            raise ConnectionError("the database went away")
        applied.append(real_apply(*args, **kwargs))

    monkeypatch.setattr(sync_module, "COMMITS_PER_TRANSACTION", 2)
    monkeypatch.setattr(sync_module, "_apply_chunk", dies_after_the_first)
    return lambda: monkeypatch.setattr(sync_module, "_apply_chunk", real_apply)


def test_a_first_sync_interrupted_between_transactions_resumes_without_losing_a_report(database, git_repo,
                                                                                       monkeypatch):
    """A first sync writes a big snapshot in several transactions; if it dies after one of them (a deploy, a
    lost database), the next sync must still store every report, not take the snapshot as done."""
    import bot.services.reports.sync as sync_module

    git_repo.write(A, canonical_report("perf_a")).commit("add a")
    for slug in ("perf_b", "perf_c", "perf_d", "perf_e"):  # one commit adds four: its steps share a sha
        git_repo.write(f"devs/issues/{slug}.md", canonical_report(slug))
    git_repo.commit("add four")
    git_repo.write("devs/issues/perf_f.md", canonical_report("perf_f")).commit("add f")
    monkeypatch.setattr(sync_module, "SNAPSHOT_STEP", 2)
    undo = _dies_after_the_first_transaction(monkeypatch)
    with pytest.raises(ConnectionError):
        run_sync(database, git_repo)
    assert 0 < len(records(database)) < 6  # the first transaction did commit
    undo()
    resumed = run_sync(database, git_repo)
    assert resumed.mode == "snapshot"
    assert set(records(database)) == {f"perf_{n}" for n in "abcdef"}
    assert all(len(history(database, slug)) == 1 for slug in records(database))
    assert run_sync(database, git_repo).mode == "up-to-date"


def test_an_interrupted_incremental_sync_resumes_from_the_last_commit_it_stored(database, git_repo, monkeypatch):
    git_repo.write(A, canonical_report("perf_a", ratio=3.0)).commit("add a")
    run_sync(database, git_repo)
    shas = [git_repo.write(A, canonical_report("perf_a", ratio=r)).commit(f"ratio {r}") for r in (4.0, 5.0, 6.0)]
    shas.append(git_repo.write(B, canonical_report("perf_b")).commit("add b"))
    undo = _dies_after_the_first_transaction(monkeypatch)
    with pytest.raises(ConnectionError):
        run_sync(database, git_repo)
    assert records(database)["perf_a"].ratio == 5.0 and "perf_b" not in records(database)
    undo()
    resumed = run_sync(database, git_repo)
    assert (resumed.mode, resumed.previous, resumed.commits) == ("incremental", shas[1], 2)
    assert [sha for _, sha in history(database, "perf_a")][1:] == shas[:3]
    assert records(database)["perf_a"].ratio == 6.0 and history(database, "perf_b") == [("added", shas[3])]


def test_reference_claims_are_linted_against_the_repositorys_reference_factor(database, git_repo):
    from tests.reading.test_lint_claims import REFERENCE  # the format's reference example: 1.6x slower than runtime@v1

    git_repo.write("devs/issues/perf_ref.md", REFERENCE).commit("a reference report")
    run_sync(database, git_repo)
    assert "reference-within-factor" not in _rules(database, "devs/issues/perf_ref.md")  # the default factor, 1.0
    git_repo.write(".perfbot.toml", "[verify]\nreference_factor = 2.0\n").write(
        "devs/issues/perf_ref.md", REFERENCE + "\n").commit("the team allows 2x of v1")
    run_sync(database, git_repo)
    assert "reference-within-factor" in _rules(database, "devs/issues/perf_ref.md")


def _rules(database, path: str) -> set[str]:
    with database.session() as session:
        found = [r for r in session.scalars(select(Revision).order_by(Revision.id)) if r.path == path]
        return {f["rule"] for f in found[-1].findings}


def test_a_report_fenced_with_the_runtimes_own_tag_is_read_as_its_program_only_once_declared(database, git_repo):
    path = "devs/issues/perf_tally.md"
    git_repo.write(path, canonical_report("perf_tally").replace("```bend", "```tally")).commit("a ```tally report")
    summary = run_sync(database, git_repo)
    assert summary.reading.language_tags == ()
    missing = _findings(database, path)["repro-missing"]
    assert "code blocks seen: c, tally" in missing["message"] and '[run] fence = ["tally"]' in missing["remedy"]
    git_repo.write(".perfbot.toml", '[run]\nfence = ["tally"]\n').write(
        path, canonical_report("perf_tally", ratio=6.0).replace("```bend", "```tally")).commit("declare the tag")
    summary = run_sync(database, git_repo)
    assert summary.reading.language_tags == ("tally",)
    assert "repro-missing" not in _findings(database, path)


def _findings(database, path: str) -> dict[str, dict]:
    with database.session() as session:
        found = [r for r in session.scalars(select(Revision).order_by(Revision.id)) if r.path == path]
        return {f["rule"]: f for f in found[-1].findings}


def test_a_new_fence_tag_in_the_configuration_rereads_the_reports_it_changes(database, git_repo):
    tally = canonical_report("perf_a").replace("```bend", "```tally")
    git_repo.write(A, tally).write(B, canonical_report("perf_b")).commit("two reports, one fenced ```tally")
    assert run_sync(database, git_repo).mode == "snapshot"
    assert (records(database)["perf_a"].errors, records(database)["perf_b"].errors) == (1, 0)  # repro-missing

    declared = git_repo.write(".perfbot.toml", '[run]\nfence = ["tally"]\n').commit("the runtime's own tag")
    summary = run_sync(database, git_repo)
    assert summary.mode == "incremental + re-read (.perfbot.toml reads reports differently)", summary.mode
    assert dict(summary.counts) == {"modified": 1, "unchanged": 1} and summary.touched == {"perf_a"}
    assert records(database)["perf_a"].errors == 0 and history(database, "perf_a")[-1] == ("modified", declared)
    assert len(history(database, "perf_b")) == 1  # read again, the same: no revision
    with database.session() as session:
        latest = session.scalars(select(Revision).order_by(Revision.id.desc())).first()
    assert latest.findings == [] and latest.content_hash == records(database)["perf_a"].content_hash
    snapshot = dump(database)
    assert run_sync(database, git_repo).mode == "up-to-date" and dump(database) == snapshot

    git_repo.write(B, canonical_report("perf_b", ratio=4.0)).commit("an edit, the tags unchanged")
    assert run_sync(database, git_repo).mode == "incremental"  # only what the commit touched


def test_an_interrupted_reread_leaves_the_mark_where_it_was():
    from datetime import UTC, datetime

    from bot.core.reports.history import CommitInfo

    commit = CommitInfo("c" * 40, "", "", datetime.now(UTC))
    steps = [sync_service.Step(commit, ()), sync_service.Step(commit, (), reread=True)]
    assert sync_service._resume_point("incremental", steps[:1]) == "c" * 40
    assert sync_service._resume_point("incremental", steps) is None
