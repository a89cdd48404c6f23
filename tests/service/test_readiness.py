"""/readyz asks the store for a write within a timeout: a read-only store is not ready, and a locked one is
reported not ready while deliveries wait on it, instead of /readyz waiting behind them."""
from __future__ import annotations

import sqlite3
import threading
import time
from importlib import import_module

import pytest
import requests
from sqlalchemy import create_engine, text
from waitress.server import create_server

from bot.app import runtime as runtime_module
from bot.app.runtime import Runtime
from bot.cli.service_cmd import SERVE_THREADS
from bot.config import Settings
from tests.servers import serving
from tests.webhooks import post_delivery

SECRET = "ready-secret"
PUSH = {"ref": "refs/heads/main", "repository": {"full_name": "acme/runtime"}}


def wait_until(condition, seconds: float = 20) -> bool:
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


def settings(tmp_path, url: str) -> Settings:
    return Settings(instance_dir=tmp_path / "instance", database_url=url, webhook_secrets=(SECRET,),
                    github_token="t", github_api_url="http://127.0.0.1:9")


@pytest.mark.postgres
def test_a_read_only_store_is_not_ready(postgres_server, tmp_path):
    url = postgres_server.create_database("perfbot_read_only")
    runtime = Runtime(settings(tmp_path, url), workers=0)
    admin = create_engine(postgres_server.url(), isolation_level="AUTOCOMMIT")
    try:
        with serving(runtime.app) as base:
            assert requests.get(f"{base}/readyz", timeout=10).json() == {"status": "ready", "detail": "ok"}
            with admin.connect() as connection:  # as after a fail-over to a standby, or a full disk's remount
                connection.execute(text("ALTER DATABASE perfbot_read_only SET default_transaction_read_only = on"))
            runtime.db.dispose()  # new connections take the setting
            answer = requests.get(f"{base}/readyz", timeout=10)
        assert answer.status_code == 503 and answer.json()["status"] == "not ready"
        assert "read-only transaction" in answer.json()["detail"]
    finally:
        runtime.stop()
        admin.dispose()


def test_readyz_answers_not_ready_while_deliveries_wait_on_a_locked_store(tmp_path, monkeypatch):
    # import_module: `bot.app.webhook` as an attribute is the blueprint the package exports under that name
    monkeypatch.setattr(import_module("bot.app.webhook"), "ACK_WAIT_SECONDS", 1.0)
    monkeypatch.setattr(runtime_module, "READY_TIMEOUT_SECONDS", 0.5)
    path = tmp_path / "perfbot.sqlite3"
    runtime = Runtime(settings(tmp_path, f"sqlite:///{path}"), workers=0, web_threads=SERVE_THREADS)
    server = create_server(runtime.app, host="127.0.0.1", port=0, threads=SERVE_THREADS)  # as `perfbot serve`
    stop = threading.Event()

    def serve() -> None:  # server.run() loops until its sockets vanish under it; this loop stops when asked
        while not stop.is_set():
            server.asyncore.loop(timeout=0.05, map=server._map, count=1)

    loop = threading.Thread(target=serve, daemon=True)
    loop.start()
    base = f"http://127.0.0.1:{server.effective_port}"
    locker = sqlite3.connect(path, isolation_level=None)
    answers: dict[str, requests.Response] = {}
    try:
        assert post_delivery(base, "push", PUSH, secret=SECRET, delivery="before").status_code == 202
        assert requests.get(f"{base}/readyz", timeout=10).status_code == 200
        locker.execute("BEGIN EXCLUSIVE")  # someone holds the write lock (a backup, a stuck migration, sqlite3)

        def post(n: int) -> None:
            answers[f"blocked-{n}"] = post_delivery(base, "push", PUSH, secret=SECRET, delivery=f"blocked-{n}",
                                                    timeout=60)

        posts = [threading.Thread(target=post, args=(n,)) for n in range(10)]  # more than the server's threads
        for thread in posts:
            thread.start()
        pool = runtime.db.engine.pool  # every server thread busy: each delivery holds a connection, waiting on the lock
        assert wait_until(lambda: pool.checkedout() >= SERVE_THREADS), pool.status()
        answer = requests.get(f"{base}/readyz", timeout=30)
        assert answer.status_code == 503 and "database is locked" in answer.json()["detail"], answer.text
        locker.execute("ROLLBACK")
        for thread in posts:
            thread.join(60)
        assert requests.get(f"{base}/readyz", timeout=10).status_code == 200
    finally:
        locker.close()
        stop.set()
        loop.join(10)
        server.close()
        server.task_dispatcher.shutdown()
        runtime.stop()
    # Each waiting delivery either got its 202 once stored, or a JSON 503 (GitHub shows it for redelivery).
    assert {a.status_code for a in answers.values()} <= {202, 503} and len(answers) == 10
    refused = [a.json()["error"] for a in answers.values() if a.status_code == 503]
    assert refused and all("did not take this delivery" in error for error in refused)
    stored = {d["id"] for d in runtime.queue.listing(limit=50)}
    assert {d for d, a in answers.items() if a.status_code == 202} <= stored


def test_readyz_answers_not_ready_while_every_connection_of_the_pool_is_held(db_url, tmp_path):
    """Threads blocked on the store hold the pool: /readyz says so at once rather than queueing behind them."""
    runtime = Runtime(settings(tmp_path, db_url), workers=0)
    used, limit = runtime.db.pool_in_use()
    held = [runtime.db.engine.connect() for _ in range(limit - used)]
    try:
        began = time.monotonic()
        ok, detail = runtime.ready()
        assert not ok and f"all {limit} database connections" in detail, detail
        assert time.monotonic() - began < 5  # not the pool's 10 s wait for a connection
    finally:
        for connection in held:
            connection.close()
    assert runtime.ready() == (True, "ok")
    runtime.stop()


def test_readyz_commits_a_write_so_a_store_that_cannot_commit_is_not_ready(tmp_path):
    """A full disk fails a commit, not a statement rolled back: the probe commits its own row, and a commit the
    store refuses (here the driver's SQLITE_FULL, raised for the probe's write) makes /readyz say so."""
    path = tmp_path / "perfbot.sqlite3"
    runtime = Runtime(settings(tmp_path, f"sqlite:///{path}"), workers=0)
    try:
        assert runtime.ready() == (True, "ok")
        with runtime.db.engine.connect() as connection:
            before = connection.execute(text("SELECT at FROM probes WHERE name = 'readyz'")).scalar()
        assert before is not None  # the probe's write reached the store, committed

        from sqlalchemy import event

        def full_disk(conn, cursor, statement, parameters, context, executemany):
            if statement.startswith("UPDATE probes"):
                raise sqlite3.OperationalError("database or disk is full")

        event.listen(runtime.db.engine, "before_cursor_execute", full_disk)
        ok, detail = runtime.ready()
        event.remove(runtime.db.engine, "before_cursor_execute", full_disk)
        assert not ok and "disk is full" in detail, detail
    finally:
        runtime.stop()
