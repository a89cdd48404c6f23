"""One repository session per delivery: a push runs the push, guards and dashboard handlers, each opening the
repository; inside `BotServices.delivery` (as `Runtime._dispatch` runs every delivery) the repository is fetched
once, its lock taken once and its .perfbot.toml read once per commit. Counted, not timed: Clones.fetch, the
lock's take and GitRepository.read_file are wrapped with counters."""
from __future__ import annotations

import json
import threading
from collections import Counter

import pytest

import handlers
from bot.adapters.clones import Clones
from bot.adapters.git import GitRepository
from bot.adapters.store import locks
from bot.services.bench.bench_inputs import CONFIG_FILE
from bot.services.worker import Event
from tests.flows import github_bot
from tests.gitrepo import RepoBuilder
from tests.reading.test_sync_order import report, stored
from tests.service.test_push_order import REPO, push_event


@pytest.fixture
def counted(monkeypatch) -> tuple[Counter, Counter]:
    """(fetches per repository, lock takes per lock name), counted where the work is really done."""
    fetches: Counter = Counter()
    takes: Counter = Counter()
    fetch, take = Clones.fetch, locks._take

    def counting_fetch(self, full_name, token=None):
        fetches[full_name] += 1
        return fetch(self, full_name, token)

    def counting_take(db, name, wait=True):
        takes[name] += 1
        return take(db, name, wait)

    monkeypatch.setattr(Clones, "fetch", counting_fetch)
    monkeypatch.setattr(locks, "_take", counting_take)
    return fetches, takes


def test_a_push_delivery_fetches_its_repository_once_and_locks_it_once(github, database, tmp_path, counted,
                                                                         monkeypatch):
    fetches, takes = counted
    configs: Counter = Counter()  # .perfbot.toml read out of a commit, per commit
    read_file = GitRepository.read_file

    def counting_read(self, sha, path):
        configs[sha] += path == CONFIG_FILE
        return read_file(self, sha, path)

    monkeypatch.setattr(GitRepository, "read_file", counting_read)
    github.add_repo(REPO)
    remote = RepoBuilder(tmp_path / "remotes" / "team" / "runtime.git", branch="main")
    first = remote.write(*report(1)).commit("report 1")
    second = remote.write(*report(2)).commit("report 2")
    with github_bot(github, database, tmp_path) as (services, _worker, _queue):
        # Before: each handler on its own, as a delivery ran them without a session.
        assert handlers.dispatch(push_event(first, "push-1"), services) == []
        assert (fetches[REPO], takes[REPO]) == (3, 2)  # push, guards, dashboard fetch; push and dashboard lock
        assert max(configs.values()) == 3  # one commit's file read by the sync, the guards and the dashboard
        fetches.clear()
        takes.clear()
        configs.clear()
        with services.delivery(REPO):
            assert handlers.dispatch(push_event(second, "push-2"), services) == []
        assert (fetches[REPO], takes[REPO]) == (1, 1)
        assert configs == {first: 1, second: 1}  # the sync reads the old head's too: each commit's read once
    head, states = stored(database)
    assert head == second and len(states) == 2
    assert github.problems() == []


def test_the_lock_kept_for_a_delivery_is_let_go_at_its_end_and_before_waiting_for_another(database):
    """Kept idle between handlers, the lock is released when the delivery ends (another thread then takes it),
    and before this thread waits for any other lock: it never waits holding a lock no running code uses."""
    order: list[str] = []
    with locks.kept_for("team/a"):
        with locks.repo_lock(database, "team/a"):
            order.append("a taken")
        assert "team/a" in locks._held.releases  # idle, still held for the delivery's next handler
        with locks.repo_lock(database, "team/a"):  # the next handler: no second take
            pass
        with locks.repo_lock(database, "team/b"):
            assert "team/a" not in locks._held.releases  # let go before waiting for team/b
        with locks.repo_lock(database, "team/a"):
            order.append("a taken again")
        other = threading.Thread(target=lambda: _lock_and_note(database, "team/a", order))
        other.start()
        other.join(0.3)
        assert other.is_alive()  # the kept lock still holds the other thread off
    other.join(30)
    assert not other.is_alive() and order == ["a taken", "a taken again", "other thread"]
    assert locks._held.releases == {} and locks._held.depth == {}


def _lock_and_note(database, name: str, order: list[str]) -> None:
    with locks.repo_lock(database, name):
        order.append("other thread")


def test_the_runtime_runs_each_delivery_in_one_session(tmp_path, monkeypatch):
    """`Runtime._dispatch`: a local-mode push opens the watched repository once for its three handlers."""
    from bot.app.runtime import Runtime
    from bot.config import Settings
    from bot.services.usecases import source

    repo = RepoBuilder(tmp_path / "runtime")
    repo.write(*report(1)).commit("report 1")
    runtime = Runtime(Settings(instance_dir=tmp_path / "instance", database_url=f"sqlite:///{tmp_path}/p.sqlite3",
                               local_repo=repo.root), workers=0)
    opened: Counter = Counter()
    takes: Counter = Counter()
    real_repository, take = source.GitRepository, locks._take

    def counting_repository(path, full_name=None):
        opened[full_name] += 1
        return real_repository(path, full_name=full_name)

    def counting_take(db, name, wait=True):
        takes[name] += 1
        return take(db, name, wait)

    monkeypatch.setattr(source, "GitRepository", counting_repository)
    monkeypatch.setattr(locks, "_take", counting_take)
    try:
        assert runtime.poll_local_repo()
        delivery = runtime.queue.claim("test", 60)
        assert delivery is not None
        event = Event(delivery.event, delivery.action, delivery.id, json.loads(delivery.payload), delivery.repo,
                      delivery.installation_id)
        assert runtime._dispatch(event) == []
        key = delivery.repo
        assert (opened[key], takes[key]) == (1, 1)
        runtime.services.reports.sync_and_mirror(key, None, None)  # outside a delivery: opens and locks anew
        assert (opened[key], takes[key]) == (2, 2)
    finally:
        runtime.db.dispose()


def test_a_session_shares_each_repository_and_remembers_no_failed_fetch(tmp_path):
    from bot.errors import TransientError
    from bot.services.usecases import RepoSource

    repo = RepoBuilder(tmp_path / "runtime")
    repo.write(*report(1)).commit("report 1")
    fetched: list[str] = []
    refuse = {"team/down": 1}  # its first fetch fails, as an outage would

    def fetch(full_name: str, _installation: int | None):
        fetched.append(full_name)
        if refuse.get(full_name):
            refuse[full_name] -= 1
            raise TransientError(f"fetching {full_name} failed")
        return repo.root

    source = RepoSource(fetch=fetch)
    with source.open("team/a", None), source.open("team/a", None):
        pass
    assert fetched == ["team/a", "team/a"]  # outside a delivery: every open fetches
    fetched.clear()
    with source.session():
        # An inner session joins the outer one.
        with source.open("team/a", None) as first, source.session(), source.open("team/a", None) as nested:
            assert nested is first
        with source.open("team/a", None) as later:
            assert later is first
        with pytest.raises(TransientError), source.open("team/down", None):
            pass
        with source.open("team/down", None):  # the failure was not kept: fetched again (a renewed token)
            pass
    assert fetched == ["team/a", "team/down", "team/down"]
    with source.session(), source.open("team/a", None) as fresh:
        assert fresh is not first  # the next delivery fetches again
