"""Pushes delivered out of order and all at once, through the handlers against the GitHub double, on SQLite and
on PostgreSQL: the stored head ends at the branch's newest commit, no record is deleted and no issue closed."""
from __future__ import annotations

import copy
import random
import threading

import handlers
from bot.services.worker import Event
from tests.flows import github_bot
from tests.gitrepo import RepoBuilder
from tests.npm_fixtures import webhook_examples
from tests.reading.test_sync_order import report, stored

REPO = "team/runtime"


def push_event(after: str, delivery: str) -> Event:
    payload = copy.deepcopy(next(p for p in webhook_examples("push") if p["ref"] == "refs/heads/master"))
    payload.update(ref="refs/heads/main", after=after)
    payload["repository"].update(full_name=REPO, name="runtime", default_branch="main")
    payload.pop("installation", None)
    return Event("push", None, delivery, payload, REPO, None)


def issues(github) -> dict[str, tuple[str, str | None]]:
    """Each perfbot record issue's slug -> (state, state reason)."""
    with github.state.lock:
        found = {}
        for issue in github.state.repo("team", "runtime").issues.values():
            first = (issue.body or "").split("\n", 1)[0]
            if first.startswith("<!-- perfbot:record "):
                slug = first.removeprefix("<!-- perfbot:record ").split()[0]
                assert slug not in found, f"two issues for {slug}"
                found[slug] = (issue.state, issue.state_reason)
        return found


def test_a_push_delivered_after_a_newer_one_closes_nothing(github, database, tmp_path):
    github.add_repo(REPO)
    remote = RepoBuilder(tmp_path / "remotes" / "team" / "runtime.git", branch="main")
    commits = [remote.write(*report(n)).commit(f"report {n}") for n in range(1, 21)]
    with github_bot(github, database, tmp_path) as (services, _worker, _queue):
        assert handlers.dispatch(push_event(commits[19], "push-20"), services) == []
        assert handlers.dispatch(push_event(commits[9], "push-10"), services) == []  # the older push, late
    head, states = stored(database)
    assert head == commits[19] and len(states) == 20 and set(states.values()) == {"open"}
    assert set(issues(github).values()) == {("open", None)} and len(issues(github)) == 20
    assert github.problems() == []


def test_a_burst_of_pushes_in_any_order_ends_at_the_newest_commit(github, database, tmp_path):
    github.add_repo(REPO)
    remote = RepoBuilder(tmp_path / "remotes" / "team" / "runtime.git", branch="main")
    first = remote.write(*report(1)).commit("report 1")
    with github_bot(github, database, tmp_path) as (services, _worker, _queue):
        assert handlers.dispatch(push_event(first, "push-1"), services) == []
        commits = [remote.write(*report(n)).commit(f"report {n}") for n in range(2, 17)]
        order = list(enumerate(commits, start=2))
        random.Random(44).shuffle(order)
        failures: list = []
        start = threading.Barrier(8)

        def deliver(share: list[tuple[int, str]]) -> None:
            start.wait()
            for n, sha in share:
                failures.extend(handlers.dispatch(push_event(sha, f"push-{n}"), services))

        threads = [threading.Thread(target=deliver, args=(order[k::8],)) for k in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(120)
        assert not any(thread.is_alive() for thread in threads)
    assert failures == []
    head, states = stored(database)
    assert head == commits[-1] and len(states) == 16 and set(states.values()) == {"open"}
    assert set(issues(github).values()) == {("open", None)} and len(issues(github)) == 16
    assert github.problems() == []
