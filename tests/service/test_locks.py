"""One writer per repository across workers: the lock serialises one repository and lets others run."""
from __future__ import annotations

import threading
import time

from bot.adapters.store.locks import repo_lock


def test_one_repository_is_written_by_one_worker_at_a_time_and_others_run_alongside(database):
    inside: list[str] = []
    overlaps: list[tuple[str, str]] = []
    guard = threading.Lock()

    def work(name: str, repo: str) -> None:
        with repo_lock(database, repo), repo_lock(database, repo):  # reentrant: a use case that calls another
            with guard:
                overlaps.extend((name, other) for other in inside)
                inside.append(name)
            time.sleep(0.2)
            with guard:
                inside.remove(name)

    threads = [threading.Thread(target=work, args=(f"a{n}", "team/a")) for n in range(3)]
    threads.append(threading.Thread(target=work, args=("b", "team/b")))
    started = time.monotonic()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert all("b" in pair for pair in overlaps)  # the a-workers never overlapped one another
    assert any("b" in pair for pair in overlaps)  # while b ran beside them
    assert time.monotonic() - started >= 0.6  # the three a-workers took turns


def test_two_workers_syncing_one_repository_open_one_issue_per_record(database, tmp_path):
    import json

    from bot.adapters.git import local_full_name
    from bot.adapters.local_issues import FileIssues
    from bot.services.usecases import BotServices, RepoSource
    from tests.gitrepo import RepoBuilder
    from tests.reports import canonical_report

    repo = RepoBuilder(tmp_path / "runtime")
    for n in range(6):
        repo.write(f"devs/issues/perf_r{n}.md", canonical_report(f"perf_r{n}"))
    repo.commit("six reports")
    key, tracker = local_full_name(repo.root), FileIssues(tmp_path / "issues")
    errors = []

    def worker() -> None:  # a push and the hourly reconcile, handled by two workers at once
        try:
            BotServices(database, lambda _n, _i: tracker, RepoSource(local={key: repo.root}),
                        bot_login="perfbot").reports.sync_and_mirror(key, None, None)
        except Exception as exc:
            errors.append(exc)

    threads = [threading.Thread(target=worker) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    titles = [i["title"].split(":")[0] for i in json.loads(tracker.state_file.read_text())["issues"].values()]
    assert errors == [] and sorted(titles) == [f"perf_r{n}" for n in range(6)]
