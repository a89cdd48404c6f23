"""A command's answer survives crashes, exactly once, on SQLite and on PostgreSQL: a real `perfbot worker` is
SIGKILLed in the middle of a command, a second one finishes it, and the comment has one answer; a database
restarted under a burst of commands leaves each comment one answer once the failed deliveries run again."""
from __future__ import annotations

import json
import os
import sqlite3
import threading
import time

import pytest
from sqlalchemy import event

import handlers
from bot.adapters.github import issues as permissions
from bot.adapters.store import answer_store
from bot.adapters.store.engine import Database
from bot.adapters.store.queue import DeliveryQueue, NewDelivery
from bot.services.worker import Event
from tests.flows import github_bot
from tests.gitrepo import RepoBuilder
from tests.processes import PerfbotProcess
from tests.webhooks import comment_payload

REPO = "team/runtime"
PERMISSION = ("GET", "/repos/{owner}/{repo}/collaborators/{username}/permission")
NEW_COMMENT = ("POST", "/repos/{owner}/{repo}/issues/{issue_number}/comments")
COMMANDS = "Two things:\n/perf help\n/perf cancel"  # cancel needs write access: the worker asks GitHub for it


def watched_repository(github, tmp_path) -> None:
    """The repository on the double, with a git remote the dashboard's refresh after a command fetches."""
    github.add_repo(REPO)
    github.set_permission(REPO, "alice", "admin")
    RepoBuilder(tmp_path / "remotes" / "team" / "runtime.git", branch="main").write(
        "README.md", "The runtime.\n").commit("first")


def answers_on(github, comment_id: int) -> list[tuple[int, str]]:
    with github.state.lock:
        return [(c.id, c.body) for c in github.state.repo("team", "runtime").comments.values()
                if c.body.startswith(f"<!-- perfbot:answer {comment_id} -->")]


def reactions(github, comment_id: int) -> list[str]:
    with github.state.lock:
        return [r.content for r in github.state.repo("team", "runtime").comments[comment_id].reactions]


def stored_answer(db_url: str, comment_id: int) -> answer_store.AnswerRow:
    database = Database(db_url)
    try:
        with database.session() as session:
            from sqlalchemy import select

            from bot.adapters.store.service_models import CommandAnswer
            answer_id = session.scalar(select(CommandAnswer.id).where(CommandAnswer.source_comment_id == comment_id))
        return answer_store.stored_answer(database, answer_id)
    finally:
        database.dispose()


@pytest.mark.parametrize("held", [PERMISSION, NEW_COMMENT], ids=["mid-command", "while-posting"])
def test_a_worker_killed_mid_command_leaves_exactly_one_answer(github, db_url, tmp_path, held):
    """mid-command: killed while the second command waits for GitHub, its 👀 given and nothing answered yet.
    while-posting: killed while GitHub creates the answer comment, which it goes on to create: the second
    worker must find that comment, not post another."""
    watched_repository(github, tmp_path)
    number = github.add_issue(REPO, "A question about the bench")
    comment_id = github.add_comment(REPO, number, COMMANDS, user="alice")
    database = Database(db_url)
    queue = DeliveryQueue(database)
    assert queue.enqueue(NewDelivery("comment-1", "issue_comment", "created", REPO, None,
                                     json.dumps(comment_payload(REPO, number, comment_id, COMMANDS, "alice"))))
    hold = github.hold_next(*held)
    env = dict(os.environ, PERFBOT_DATABASE_URL=db_url, PERFBOT_INSTANCE_DIR=str(tmp_path / "instance"),
               PERFBOT_GITHUB_TOKEN=github.token, PERFBOT_GITHUB_API_URL=github.url, PERFBOT_LEASE_SECONDS="2",
               PERFBOT_GIT_BASE_URL=f"file://{tmp_path / 'remotes'}",
               PERFBOT_GITHUB_REQUEST_INTERVAL="0", PERFBOT_GITHUB_WRITE_INTERVAL="0")
    log = tmp_path / "worker.log"
    first = PerfbotProcess(env, log, "worker", "--workers", "1").start()
    try:
        assert hold.reached.wait(60), f"the worker never reached {held}:\n{log.read_text()[-3000:]}"
        first.kill()
    finally:
        hold.release()  # GitHub carries out the request the dead worker made
        first.stop()
    assert hold.answered.wait(60)
    assert reactions(github, comment_id) == ["eyes"]
    posted_by_the_dead = len(answers_on(github, comment_id))
    assert posted_by_the_dead == (1 if held == NEW_COMMENT else 0)

    second = PerfbotProcess(env, log, "worker", "--workers", "1").start()
    try:
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            [row] = [d for d in queue.listing(limit=20) if d["id"] == "comment-1"]
            if row["status"] in ("done", "failed"):
                break
            time.sleep(0.2)
    finally:
        second.stop()
        database.dispose()
    assert (row["status"], row["attempts"]) == ("done", 2), (row, log.read_text()[-3000:])

    [(answer_id, body)] = answers_on(github, comment_id)  # one answer, never none, never two
    assert "/perf verify [SLUG...]" in body and "this issue mirrors no report" in body and "…" not in body
    assert reactions(github, comment_id) == ["eyes"]
    stored = stored_answer(db_url, comment_id)
    assert stored.answer_comment_id == answer_id
    assert [line["state"] for line in stored.lines] == ["posted", "posted"]
    assert github.problems() == []


def test_a_database_restart_under_a_burst_of_commands_leaves_one_answer_each(github, database, db_url, tmp_path,
                                                                             request):
    """Twelve command comments handled by six threads; the store goes down while one command waits for GitHub
    (its lines stored, its answer not yet posted) and stays down until the burst has run its course; each
    delivery that failed runs again (a retry or GitHub's redelivery), and every comment ends with one answer."""
    watched_repository(github, tmp_path)
    number = github.add_issue(REPO, "Questions")
    bodies = [f"Question {n}:\n/perf help\n/perf cancel" for n in range(12)]
    comments = [github.add_comment(REPO, number, body, user="alice") for body in bodies]
    events = [Event("issue_comment", "created", f"comment-{n}",
                    comment_payload(REPO, number, comment_id, body, "alice"), REPO, None)
              for n, (comment_id, body) in enumerate(zip(comments, bodies, strict=True))]
    outage = StoreOutage(request, database, db_url)
    permissions._permissions.clear()  # asked once per process and remembered: the first `cancel` waits
    hold = github.hold_next(*PERMISSION)
    with github_bot(github, database, tmp_path) as (services, _worker, _queue):
        failed: list[Event] = []
        lock = threading.Lock()

        def handle(share: list[Event]) -> None:
            for event in share:
                if handlers.dispatch(event, services):
                    with lock:
                        failed.append(event)

        threads = [threading.Thread(target=handle, args=(events[k::6],)) for k in range(6)]
        for thread in threads:
            thread.start()
        try:
            assert hold.reached.wait(60)
            outage.down()
        finally:
            hold.release()
        for thread in threads:
            thread.join(120)
        assert not any(thread.is_alive() for thread in threads)
        outage.up()
        assert failed, "nothing failed: the outage missed the burst"
        for event in failed:  # the retry of every failed delivery, once the store is back
            assert handlers.dispatch(event, services) == []

    posted = {comment_id: answers_on(github, comment_id) for comment_id in comments}
    assert [len(found) for found in posted.values()] == [1] * 12, posted  # one answer each, never none or two
    complete = ["/perf verify [SLUG...]" in body and "this issue mirrors no report" in body and "…" not in body
                for [(_, body)] in posted.values()]
    assert complete == [True] * 12, posted
    for comment_id, [(answer_id, _)] in posted.items():
        assert reactions(github, comment_id) == ["eyes"]
        stored = stored_answer(db_url, comment_id)
        assert stored.answer_comment_id == answer_id and [line["state"] for line in stored.lines] == ["posted"] * 2
    assert github.problems() == []


class StoreOutage:
    """The store down, then back: the PostgreSQL server stopped at once (every connection cut, new ones
    refused) and started again, or on SQLite, which has no server, every statement failing meanwhile as an
    unreadable database file would make it."""

    def __init__(self, request, database, db_url: str) -> None:
        self.database = database
        self.server = request.getfixturevalue("postgres_server") if db_url.startswith("postgresql") else None

    def down(self) -> None:
        if self.server is not None:
            self.server.stop_now()
        else:
            event.listen(self.database.engine, "before_cursor_execute", _unreadable)

    def up(self) -> None:
        if self.server is not None:
            self.server.start_again()
        else:
            event.remove(self.database.engine, "before_cursor_execute", _unreadable)


def _unreadable(*_args) -> None:
    raise sqlite3.OperationalError("disk I/O error")
