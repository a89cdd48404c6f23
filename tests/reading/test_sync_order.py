"""The stored head only moves forward, whatever order pushes are handled in, on SQLite and on PostgreSQL:
a stale push is a no-op, a force push is decided by the branch as fetched, and two syncs that race write once."""
from __future__ import annotations

import pytest
from sqlalchemy import select

from bot.adapters.git import GitRepository
from bot.adapters.store.models import Record, Repo
from bot.services.reports.sync import sync
from tests.gitrepo import RepoBuilder, sync_repo
from tests.reports import canonical_report


def report(n: int) -> tuple[str, str]:
    slug = f"perf_r{n:02d}"
    return f"devs/issues/{slug}.md", canonical_report(slug, ratio=2.0 + n / 10)


def twenty_commits(git_repo: RepoBuilder) -> list[str]:
    """Commit n (1-based, index n-1) adds report n."""
    return [git_repo.write(*report(n)).commit(f"report {n}") for n in range(1, 21)]


def stored(database) -> tuple[str | None, dict[str, str]]:
    with database.session() as session:
        head = session.scalar(select(Repo.last_synced_commit))
        return head, {r.slug: r.state for r in session.scalars(select(Record))}


def test_an_older_push_handled_after_a_newer_one_changes_nothing(database, git_repo):
    commits = twenty_commits(git_repo)
    sync_repo(database, git_repo, ref=commits[19])
    before = stored(database)
    assert before[0] == commits[19] and set(before[1].values()) == {"open"} and len(before[1]) == 20

    summary = sync_repo(database, git_repo, ref=commits[9])  # the push of commit 10, delivered late
    assert (summary.mode, summary.head, summary.passed_over, summary.touched) == ("up-to-date", commits[19],
                                                                                   commits[9], set())
    assert stored(database) == before  # head at 20, no record deleted


def test_a_newer_push_after_an_older_one_moves_forward_one_step_at_a_time(database, git_repo):
    commits = twenty_commits(git_repo)
    sync_repo(database, git_repo, ref=commits[9])
    summary = sync_repo(database, git_repo, ref=commits[19])
    assert (summary.mode, summary.passed_over, summary.counts["added"]) == ("incremental", None, 10)
    assert stored(database)[0] == commits[19]


def test_a_push_off_the_stored_line_is_decided_by_the_branch_as_fetched(database, git_repo):
    commits = twenty_commits(git_repo)
    git_repo.repo.git.branch("old-line", commits[19])
    git_repo.repo.head.reset(commits[9], index=True, working_tree=True)  # force push: 11..20 are gone from main
    rewritten = git_repo.write(*report(21)).commit("report 21, on the rewritten line")
    sync_repo(database, git_repo, ref=rewritten)
    assert stored(database)[1]["perf_r21"] == "open"

    summary = sync_repo(database, git_repo, ref=commits[19])  # the push before the force push, delivered late
    assert (summary.mode, summary.head, summary.passed_over) == ("up-to-date", rewritten, commits[19])
    head, states = stored(database)
    assert head == rewritten and states["perf_r21"] == "open" and "perf_r15" not in states  # 11..20 not back


def test_a_stale_push_after_a_force_push_moves_to_the_fetched_tip_not_to_the_push(database, git_repo):
    commits = twenty_commits(git_repo)
    sync_repo(database, git_repo, ref=commits[19])
    git_repo.repo.git.branch("old-line", commits[19])
    git_repo.repo.head.reset(commits[14], index=True, working_tree=True)
    tip = git_repo.write(*report(21)).commit("report 21 after a force push")
    # The force push's own delivery is still queued; a late delivery of commit 12 comes first.
    summary = sync_repo(database, git_repo, ref=commits[11])
    assert (summary.mode, summary.head, summary.passed_over) == ("rewritten", tip, commits[11])
    head, states = stored(database)
    assert head == tip and states["perf_r21"] == "open"
    assert all(states[f"perf_r{n:02d}"] == "open" for n in range(1, 16))
    # 16 to 20 left with the force push (git may read report 21 as report 16 renamed: same template)
    assert all(states.get(f"perf_r{n}", "deleted") == "deleted" for n in range(16, 21))


def test_a_branch_force_pushed_back_to_an_older_commit_is_followed(database, git_repo):
    """The one move to an ancestor: the fetched branch itself went back, so the push names its tip."""
    commits = twenty_commits(git_repo)
    sync_repo(database, git_repo, ref=commits[19])
    git_repo.repo.head.reset(commits[17], index=True, working_tree=True)
    summary = sync_repo(database, git_repo, ref=commits[17])
    assert (summary.mode, summary.head) == ("rewritten", commits[17])
    head, states = stored(database)
    assert head == commits[17] and {s for s, st in states.items() if st == "deleted"} == {"perf_r19", "perf_r20"}


def test_a_pushed_commit_the_clone_never_saw_is_read_as_a_stale_push(database, git_repo):
    commits = twenty_commits(git_repo)
    sync_repo(database, git_repo, ref=commits[19])
    summary = sync_repo(database, git_repo, ref="0123456789abcdef0123456789abcdef01234567")
    assert (summary.mode, summary.head) == ("up-to-date", commits[19])
    assert stored(database)[0] == commits[19]


def test_two_syncs_that_race_write_once_and_the_loser_retries_from_the_new_head(database, git_repo):
    from bot.services.reports.sync import SyncRaced

    commits = twenty_commits(git_repo)
    sync_repo(database, git_repo, ref=commits[4])
    loser = GitRepository(git_repo.root)

    def the_other_sync_lands_first(_total: int) -> None:
        sync_repo(database, git_repo, ref=commits[19])  # planned after the loser, committed before it

    try:
        with pytest.raises(SyncRaced, match="another sync moved the stored head"):
            sync(database, loser, ref=commits[9], on_plan=the_other_sync_lands_first)
        head, states = stored(database)
        assert head == commits[19] and len(states) == 20 and set(states.values()) == {"open"}
        retried = sync(database, loser, ref=commits[9])  # the retry: the stored head is newer now
        assert (retried.mode, retried.head) == ("up-to-date", commits[19])
    finally:
        loser.close()
    assert stored(database)[0] == commits[19]
