"""A long job on a repository does not hold up comments on it (issue #44, failure 8), on SQLite and PostgreSQL:
while another worker holds the repository's lock (a push syncing 80 reports), `/perf status` comments are
answered, and the dashboard's re-draw after each waits in the queue (no failed attempt) instead of holding the
comment's thread, which would leave every later comment behind the push."""
from __future__ import annotations

import json
import threading

from bot.adapters.store.locks import repo_lock
from bot.adapters.store.queue import NewDelivery
from tests.flows import github_bot
from tests.service.test_answer_crash import REPO, answers_on, watched_repository
from tests.webhooks import comment_payload


def _due_now(database, delivery_id: str) -> None:
    from sqlalchemy import update

    from bot.adapters.store.queue import utcnow
    from bot.adapters.store.service_models import Delivery

    with database.session() as session:
        session.execute(update(Delivery).where(Delivery.id == delivery_id).values(next_attempt_at=utcnow()))


def test_status_comments_are_answered_while_a_long_job_holds_their_repository(github, database, tmp_path):
    watched_repository(github, tmp_path)
    number = github.add_issue(REPO, "Where do we stand?")
    comments = [github.add_comment(REPO, number, f"/perf status perf_{n}", user="alice") for n in range(3)]
    with github_bot(github, database, tmp_path) as (_services, worker, queue):
        for n, comment_id in enumerate(comments):
            queue.enqueue(NewDelivery(f"status-{n}", "issue_comment", "created", REPO, None,
                                      json.dumps(comment_payload(REPO, number, comment_id, f"/perf status perf_{n}",
                                                                 "alice"))))
        held, release = threading.Event(), threading.Event()

        def long_push() -> None:  # another worker's sync, holding the repository until told to stop
            with repo_lock(database, REPO):
                held.set()
                release.wait(300)

        pusher = threading.Thread(target=long_push)
        pusher.start()
        try:
            assert held.wait(60)
            ran = threading.Thread(target=lambda: [worker.run_once() for _ in comments])  # one thread: the lane
            ran.start()
            ran.join(120)  # bounded only so a broken build fails instead of hanging: nothing here is timed
            assert not ran.is_alive(), "a comment's thread waited for the repository the long job holds"
        finally:
            release.set()
            pusher.join(60)
        # Every comment answered during the push, each once; its delivery waits for the dashboard, uncounted.
        assert [len(answers_on(github, c)) for c in comments] == [1, 1, 1]
        waiting = [queue.get(f"status-{n}") for n in range(3)]
        assert [(d["status"], d["attempts"]) for d in waiting] == [("pending", 0)] * 3, waiting
        assert all("is busy" in d["error"] for d in waiting), waiting
        for n in range(3):  # the push ended: the re-draws run, and the answers stay as they were
            _due_now(database, f"status-{n}")
            assert worker.run_once()
        assert [queue.get(f"status-{n}")["status"] for n in range(3)] == ["done"] * 3
    assert [len(answers_on(github, c)) for c in comments] == [1, 1, 1]
    assert github.problems() == []
