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
        with repo_lock(database, repo):
            with repo_lock(database, repo):  # reentrant: a use case that calls another
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
