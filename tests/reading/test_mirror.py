"""The mirror: one issue per record, marked comments edited not reposted, zero writes when nothing changed."""
from __future__ import annotations

import json

import pytest

from bot.adapters.local_issues import FileIssues
from bot.services.reports.mirror import mirror_repo
from tests import flows
from tests.reports import canonical_report

A, B, C = (f"devs/issues/perf_{n}.md" for n in ("a", "b", "c"))
KEY = "team/runtime"


class Recording:
    """Wraps a tracker and records which write methods were called."""

    WRITES = ("ensure_labels", "create_issue", "update_issue", "upsert_comment")

    def __init__(self, inner) -> None:
        self.inner = inner
        self.calls: list[str] = []

    def __getattr__(self, name):
        attr = getattr(self.inner, name)
        if name not in self.WRITES:
            return attr

        def call(*args, **kwargs):
            self.calls.append(name)
            return attr(*args, **kwargs)
        return call

    def take(self) -> list[str]:
        calls, self.calls = self.calls, []
        return calls


@pytest.fixture
def tracker(tmp_path):
    return Recording(FileIssues(tmp_path / "issues"))


def issues_of(tracker) -> dict:
    return json.loads(tracker.inner.state_file.read_text())["issues"]


def sync_and_mirror(database, builder, tracker):
    return flows.sync_and_mirror(database, builder, tracker, KEY)


def test_one_issue_per_record_then_zero_writes_when_unchanged(database, git_repo, tracker):
    git_repo.write(A, canonical_report("perf_a")).write(B, canonical_report("perf_b", track="par", backend="cuda",
                                                                             threads=64, ratio=9.0)).commit("two")
    first = sync_and_mirror(database, git_repo, tracker)
    assert first.counts["created"] == 2
    issues = issues_of(tracker)
    assert sorted(i["body"].split("\n")[0] for i in issues.values()) == [
        "<!-- perfbot:record perf_a -->", "<!-- perfbot:record perf_b -->"]
    labels = {i["title"].split(":")[0]: i["labels"] for i in issues.values()}
    assert labels["perf_b"] == ["backend: cuda", "perfbot", "state: open", "track: par"]
    tracker.take()
    again = mirror_repo(database, tracker, KEY, None)
    assert tracker.take() == [] and again.counts == {"unchanged": 2}


def test_lint_findings_live_in_one_comment_that_is_edited(database, git_repo, tracker):
    git_repo.write(A, canonical_report("perf_a", ratio=1.5)).commit("within tolerance")
    sync_and_mirror(database, git_repo, tracker)
    comments = issues_of(tracker)["1"]["comments"]
    assert len(comments) == 1 and "seq-within-tolerance" in comments[0]["body"]
    assert "lint: errors" in issues_of(tracker)["1"]["labels"]
    git_repo.write(A, canonical_report("perf_a", ratio=4.5)).commit("measured again")
    sync_and_mirror(database, git_repo, tracker)
    comments = issues_of(tracker)["1"]["comments"]
    assert len(comments) == 1 and "clean now" in comments[0]["body"]
    assert "lint: errors" not in issues_of(tracker)["1"]["labels"]


def test_a_merged_record_closes_its_issue_as_a_duplicate_of_the_new_one(database, git_repo, tracker):
    git_repo.write(A, canonical_report("perf_a")).commit("a")
    sync_and_mirror(database, git_repo, tracker)
    git_repo.delete(A).write(C, canonical_report("perf_c", supersedes=("perf_a",))).commit("merge a into c")
    sync_and_mirror(database, git_repo, tracker)
    issues = issues_of(tracker)
    old, new = issues["1"], issues["2"]
    assert (old["state"], old["state_reason"], new["state"]) == ("closed", "duplicate", "open")
    assert "state: merged" in old["labels"]
    assert [c["body"].split("\n")[1] for c in old["comments"]] == ["Duplicate of #2"]
    tracker.take()
    mirror_repo(database, tracker, KEY, None)
    assert tracker.take() == []


def test_a_lost_database_finds_the_issues_again_by_their_markers(database, git_repo, tracker, tmp_path):
    from bot.adapters.store.engine import Database

    git_repo.write(A, canonical_report("perf_a")).write(B, canonical_report("perf_b")).commit("two")
    sync_and_mirror(database, git_repo, tracker)
    fresh = Database(f"sqlite:///{tmp_path / 'rebuilt.sqlite3'}")
    try:
        tracker.take()
        summary = sync_and_mirror(fresh, git_repo, tracker)
    finally:
        fresh.dispose()
    assert "create_issue" not in tracker.take() and sorted(issues_of(tracker)) == ["1", "2"]
    assert summary.counts["updated"] == 2


def test_a_record_with_a_fix_is_labelled_so(database, git_repo, tracker):
    git_repo.write(A, canonical_report("perf_a", fix="fix/perf_a-unbox")).write(B, canonical_report("perf_b"))
    git_repo.commit("two")
    sync_and_mirror(database, git_repo, tracker)
    labels = {i["title"].split(":")[0]: i["labels"] for i in issues_of(tracker).values()}
    assert "has fix" in labels["perf_a"] and "has fix" not in labels["perf_b"]
