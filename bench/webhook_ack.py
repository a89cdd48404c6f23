"""The acknowledgement path: signed push deliveries to /webhook against a bare Flask endpoint, one server.

Run: .venv/bin/python bench/webhook_ack.py [--requests 3000] [--clients 4]
Both endpoints live in the same app under the same waitress server; requests alternate in blocks
(A B A B ...) so drift on the machine hits both alike. /webhook verifies the signature, parses the
JSON and stores the delivery (SQLite, WAL) before answering 202; /bare answers 202 and does nothing.
"""
from __future__ import annotations

import argparse
import hashlib
import hmac
import json
import statistics
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import requests
from waitress.server import create_server

import handlers
from bot.adapters.store.engine import Database
from bot.adapters.store.queue import DeliveryQueue
from bot.app import create_app
from bot.config import Settings

SECRET = "bench-secret"
BLOCK = 250


def push_payload() -> bytes:
    payload = {
        "ref": "refs/heads/main", "before": "0" * 40, "after": "1" * 40, "deleted": False,
        "repository": {"full_name": "team/runtime", "default_branch": "main", "id": 1},
        "installation": {"id": 42}, "sender": {"login": "seq-agent"},
        "commits": [{"id": "1" * 40, "added": ["devs/issues/perf_x.md"], "modified": [], "removed": []}],
        "padding": "x" * 6000,  # real push payloads are several kilobytes
    }
    return json.dumps(payload).encode()


def build_server(workdir: Path):
    settings = Settings(instance_dir=workdir, database_url=f"sqlite:///{workdir / 'bench.sqlite3'}",
                        webhook_secrets=(SECRET,), github_token="unused")
    db = Database(settings.database_url)
    app = create_app(settings, DeliveryQueue(db), wanted_events=handlers.github_events())
    app.add_url_rule("/bare", "bare", lambda: ("", 202), methods=["POST"])
    server = create_server(app, host="127.0.0.1", port=0, threads=8)
    threading.Thread(target=server.run, daemon=True).start()
    return server, db


def send(session: requests.Session, url: str, body: bytes, delivery: str) -> float:
    headers = {
        "X-GitHub-Event": "push", "X-GitHub-Delivery": delivery, "Content-Type": "application/json",
        "X-Hub-Signature-256": "sha256=" + hmac.new(SECRET.encode(), body, hashlib.sha256).hexdigest(),
    }
    start = time.perf_counter()
    response = session.post(url, data=body, headers=headers, timeout=30)
    elapsed = time.perf_counter() - start
    if response.status_code != 202:
        raise SystemExit(f"{url} answered {response.status_code}: {response.text[:200]}")
    return elapsed


def run_block(base: str, path: str, body: bytes, start: int, count: int, clients: int,
              sessions: list[requests.Session]) -> tuple[list[float], float]:
    began = time.perf_counter()
    with ThreadPoolExecutor(clients) as pool:
        latencies = list(pool.map(
            lambda n: send(sessions[n % clients], f"{base}{path}", body, f"bench-{path[1:]}-{n}"),
            range(start, start + count)))
    return latencies, time.perf_counter() - began


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=3000, help="per endpoint")
    parser.add_argument("--clients", type=int, default=4, help="concurrent client threads")
    args = parser.parse_args()
    workdir = Path(tempfile.mkdtemp(prefix="perfbot-ack-"))
    server, db = build_server(workdir)
    base = f"http://127.0.0.1:{server.effective_port}"
    body = push_payload()
    sessions = [requests.Session() for _ in range(args.clients)]
    results = {"/bare": ([], 0.0), "/webhook": ([], 0.0)}
    run_block(base, "/bare", body, 10**9, 100, args.clients, sessions)  # warm-up: connections, imports
    for start in range(0, args.requests, BLOCK):
        count = min(BLOCK, args.requests - start)
        for path in ("/bare", "/webhook"):
            latencies, seconds = run_block(base, path, body, start, count, args.clients, sessions)
            results[path] = (results[path][0] + latencies, results[path][1] + seconds)
    stored = DeliveryQueue(db).counts().get("pending", 0)
    server.close()
    db.dispose()

    def row(path: str) -> tuple[float, float, float]:
        latencies, seconds = results[path]
        ordered = sorted(latencies)
        return (statistics.median(ordered) * 1000, ordered[int(len(ordered) * 0.99) - 1] * 1000,
                len(ordered) / seconds)

    print(f"{args.requests} signed {len(body)}-byte push deliveries per endpoint, {args.clients} clients, waitress")
    print(f"{'endpoint':<10} {'p50':>8} {'p99':>8} {'throughput':>12}")
    for path in ("/bare", "/webhook"):
        p50, p99, rate = row(path)
        print(f"{path:<10} {p50:>6.2f}ms {p99:>6.2f}ms {rate:>9.0f}/s")
    (b50, b99, brate), (w50, w99, wrate) = row("/bare"), row("/webhook")
    print(f"webhook/bare: p50 {w50 / b50:.2f}x, p99 {w99 / b99:.2f}x, throughput {wrate / brate:.2f}x "
          f"({stored} deliveries stored)")


if __name__ == "__main__":
    main()
