"""`perfbot serve` as a real process: deliveries in, SIGKILL mid-work, restart, every delivery handled once."""
from __future__ import annotations

import copy
import itertools
import json
import os
import threading
import time
from collections import Counter
from pathlib import Path

import pytest
import requests

from bot.adapters.store.engine import Database
from bot.adapters.store.queue import DeliveryQueue
from tests.gitrepo import RepoBuilder
from tests.npm_fixtures import webhook_examples
from tests.processes import PerfbotProcess
from tests.reports import canonical_report
from tests.servers import free_port
from tests.webhooks import post_delivery, sign

REPO = "team/runtime"
SECRET = "process-test-secret"


class Service(PerfbotProcess):
    """`perfbot serve ARGS...`, started only once /readyz answers 200."""

    def __init__(self, env: dict, base: str, log: Path, args: tuple[str, ...] = ()) -> None:
        super().__init__(env, log, "serve", *args)
        self.base = base

    def start(self) -> Service:
        super().start()
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if not self.alive():
                pytest.fail(f"perfbot serve exited with {self.process.returncode}:\n{self.text()[-3000:]}")
            try:
                if requests.get(f"{self.base}/readyz", timeout=1).status_code == 200:
                    return self
            except requests.ConnectionError:
                pass
            time.sleep(0.1)
        pytest.fail("perfbot serve did not become ready in 30 s")


def push_payload(after: str) -> dict:
    payload = copy.deepcopy(next(p for p in webhook_examples("push") if p["ref"] == "refs/heads/master"))
    payload.update(ref="refs/heads/main", after=after)
    payload["repository"].update(full_name=REPO, name="runtime", default_branch="main")
    payload.pop("installation", None)
    return payload


def marked(double) -> tuple[Counter, Counter]:
    """How many issues carry each record marker, and how many comments carry each comment marker."""
    with double.state.lock:
        repo = double.state.repo(*REPO.split("/"))
        issues = Counter(i.body.split("\n", 1)[0] for i in repo.issues.values() if i.body)
        comments = Counter((c.issue_number, c.body.split("\n", 1)[0]) for c in repo.comments.values())
    return issues, comments


def test_a_killed_service_resumes_and_handles_every_delivery_once(github, tmp_path):
    github.add_repo(REPO)
    github.use_git_remotes(tmp_path / "remotes")  # dedup pushes merge branches there and opens PRs on them
    remote = RepoBuilder(tmp_path / "remotes" / "team" / "runtime.git", branch="main")
    port = free_port()
    database_url = f"sqlite:///{tmp_path / 'perfbot.sqlite3'}"
    env = dict(os.environ, PERFBOT_WEBHOOK_SECRET=SECRET, PERFBOT_BIND=f"127.0.0.1:{port}",
               PERFBOT_DATABASE_URL=database_url, PERFBOT_INSTANCE_DIR=str(tmp_path / "instance"),
               PERFBOT_GITHUB_TOKEN=github.token, PERFBOT_GITHUB_API_URL=github.url,
               PERFBOT_GIT_BASE_URL=f"file://{tmp_path / 'remotes'}", PERFBOT_LEASE_SECONDS="2",
               PERFBOT_GITHUB_REQUEST_INTERVAL="0", PERFBOT_GITHUB_WRITE_INTERVAL="0.05")
    service = Service(env, f"http://127.0.0.1:{port}", tmp_path / "serve.log")
    service.start()
    try:
        deliveries = []
        for push in range(4):
            for n in range(3):
                slug = f"perf_p{push}_{n}"
                ratio = 1.5 if n == 0 else 3.0 + n  # one report per push has a lint error, so a comment too
                remote.write(f"devs/issues/{slug}.md", canonical_report(slug, ratio=ratio))
            after = remote.commit(f"push {push}")
            deliveries.append((f"push-{push}", push_payload(after)))
        for delivery, payload in deliveries:
            assert post_delivery(service.base, "push", payload, secret=SECRET, delivery=delivery).status_code == 202

        deadline = time.monotonic() + 30
        while not github.writes() and time.monotonic() < deadline:
            time.sleep(0.01)
        assert github.writes(), f"no GitHub write within 30 s:\n{service.log.read_text()[-3000:]}"
        service.kill()  # in the middle of mirroring: some issues exist, the delivery is unfinished
        issues_at_kill = sum(marked(github)[0].values())
        assert issues_at_kill < 12

        service.start()
        for delivery, payload in deliveries:  # GitHub redelivers what it thinks failed: acknowledged, not rerun
            assert post_delivery(service.base, "push", payload, secret=SECRET, delivery=delivery).status_code == 200
        db = Database(database_url)
        queue = DeliveryQueue(db)
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            rows = [d for d in queue.listing(limit=100) if d["id"].startswith("push-")]
            states = {d["id"]: d["status"] for d in rows}
            if len(states) == 4 and set(states.values()) == {"done"}:
                break
            time.sleep(0.2)
        db.dispose()
        assert set(states.values()) == {"done"}, (states, service.log.read_text()[-3000:])
        # The delivery that was running when the process died ran again once its lease expired.
        assert max(d["attempts"] for d in rows) == 2, rows
    finally:
        service.stop()

    issues, comments = marked(github)
    records = {marker: n for marker, n in issues.items() if marker.startswith("<!-- perfbot:record")}
    assert len(records) == 12 and set(issues.values()) == {1}, issues  # one issue per record; no PR twice
    assert set(comments.values()) == {1}, comments  # every marked comment exists once: edited, never reposted
    assert sum(marker.startswith("<!-- perfbot:lint") for _, marker in comments) == 4  # one per bad report
    assert github.problems() == []


def test_every_acknowledged_delivery_survives_a_kill_under_a_burst(github, tmp_path):
    """16 clients post signed deliveries at once; SIGKILL lands mid-burst; every id answered 202 is in the store."""
    port = free_port()
    database_url = f"sqlite:///{tmp_path / 'perfbot.sqlite3'}"
    env = dict(os.environ, PERFBOT_WEBHOOK_SECRET=SECRET, PERFBOT_BIND=f"127.0.0.1:{port}",
               PERFBOT_DATABASE_URL=database_url, PERFBOT_INSTANCE_DIR=str(tmp_path / "instance"),
               PERFBOT_GITHUB_TOKEN=github.token, PERFBOT_GITHUB_API_URL=github.url)
    service = Service(env, f"http://127.0.0.1:{port}", tmp_path / "serve.log")
    # A comment deletion is stored and acknowledged like any delivery, and its handler has nothing to do after.
    payload = copy.deepcopy(next(iter(webhook_examples("issue_comment"))))
    payload.update(action="deleted")
    body = json.dumps(payload).encode()
    acknowledged: list[str] = []
    refused: list[str] = []
    busy: list[str] = []  # answered 503 "redeliver it": refused in words, never acknowledged
    wrong: list[str] = []
    enough = threading.Event()
    stop = threading.Event()

    def client(n: int) -> None:
        with requests.Session() as session:
            for k in itertools.count():
                delivery = f"burst-{n}-{k}"
                try:
                    answer = session.post(f"{service.base}/webhook", data=body, timeout=10, headers={
                        "X-GitHub-Event": "issue_comment", "X-GitHub-Delivery": delivery,
                        "Content-Type": "application/json", "X-Hub-Signature-256": sign(SECRET, body)})
                except requests.RequestException:  # reset or cut short when the process died: never acknowledged
                    refused.append(delivery)
                    return
                if answer.status_code == 503 and "redeliver it" in answer.text:
                    # the store's busy answer on a loaded machine: not acknowledged, so GitHub keeps it to redeliver
                    busy.append(delivery)
                    if stop.is_set():
                        return
                    continue
                if answer.status_code != 202:
                    wrong.append(f"{delivery}: {answer.status_code} {answer.text[:200]}")
                    return
                acknowledged.append(delivery)
                if len(acknowledged) >= 300:
                    enough.set()
                if stop.is_set():
                    return

    service.start()
    try:
        clients = [threading.Thread(target=client, args=(n,)) for n in range(16)]
        for thread in clients:
            thread.start()
        assert enough.wait(60), f"only {len(acknowledged)} deliveries acknowledged in 60 s"
        service.kill()
        stop.set()
        for thread in clients:
            thread.join(15)
    finally:
        stop.set()
        service.stop()

    assert not wrong, wrong
    assert refused, "the kill landed after the burst, not in it: no request was in flight"
    db = Database(database_url)
    try:
        with db.engine.connect() as connection:
            stored = {row[0] for row in connection.exec_driver_sql("SELECT id FROM deliveries")}
    finally:
        db.dispose()
    missing = sorted(set(acknowledged) - stored)
    assert not missing, f"{len(missing)} of {len(acknowledged)} acknowledged deliveries lost: {missing[:10]}"
