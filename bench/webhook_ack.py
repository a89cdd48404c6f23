"""The acknowledgement path: signed push deliveries to /webhook against a bare Flask endpoint, one server.

Run: .venv/bin/python bench/webhook_ack.py [--requests 3000] [--clients 4,16] [--dir PATH] [--in-process]
Both endpoints live in the same app under the same waitress server (8 threads, as `perfbot serve`); requests
alternate in blocks (A B A B ...) so drift on the machine hits both alike, and each client count in the sweep
runs in the same process, one after the other. /webhook verifies the signature, parses the JSON and stores the
delivery durably (SQLite, WAL, synchronous=FULL for the queue's one INSERT) before answering 202; /bare
answers 202 and does nothing. The database lives on disk (--dir, default a new directory under the system's
temporary directory), never in memory. The clients run in a process of their own (GitHub is not inside
perfbot's process, and clients sharing the server's interpreter lock measure the lock's hand-offs between
them as much as the server); `--in-process` puts them back in the server's process, as the first version of
this benchmark did.
"""
from __future__ import annotations

import argparse
import hashlib
import hmac
import json
import multiprocessing
import os
import shutil
import statistics
import subprocess
import tempfile
import threading
import time
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor
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


_SESSIONS: dict[int, list[requests.Session]] = {}  # the client process's keep-alive connections, per client count


def client_block(base: str, path: str, body: bytes, start: int, count: int, clients: int) -> tuple[list[float], float]:
    """run_block inside the client process, with sessions that live there."""
    sessions = _SESSIONS.setdefault(clients, [requests.Session() for _ in range(clients)])
    return run_block(base, path, body, start, count, clients, sessions)


def run_block(base: str, path: str, body: bytes, start: int, count: int, clients: int,
              sessions: list[requests.Session]) -> tuple[list[float], float]:
    began = time.perf_counter()
    with ThreadPoolExecutor(clients) as pool:
        latencies = list(pool.map(
            lambda n: send(sessions[n % clients], f"{base}{path}", body, f"bench-{path[1:]}-{n}"),
            range(start, start + count)))
    return latencies, time.perf_counter() - began


def measure(base: str, body: bytes, requests_per_endpoint: int, clients: int,
            pool: ProcessPoolExecutor | None) -> dict[str, tuple[list, float]]:
    sessions = [requests.Session() for _ in range(clients)]

    def block(*args) -> tuple[list[float], float]:
        return pool.submit(client_block, *args, clients).result() if pool else run_block(*args, clients, sessions)

    results = {"/bare": ([], 0.0), "/webhook": ([], 0.0)}
    block(base, "/bare", body, 10**9 + clients * 10**6, 100)  # warm-up: connections, imports
    for start in range(0, requests_per_endpoint, BLOCK):
        count = min(BLOCK, requests_per_endpoint - start)
        for path in ("/bare", "/webhook"):
            # Ids carry the client count, so each sweep step stores new deliveries instead of meeting duplicates.
            latencies, seconds = block(base, path, body, clients * 10**7 + start, count)
            results[path] = (results[path][0] + latencies, results[path][1] + seconds)
    return results


def summary(results: dict[str, tuple[list, float]]) -> dict[str, tuple[float, float, float]]:
    rows = {}
    for path, (latencies, seconds) in results.items():
        ordered = sorted(latencies)
        rows[path] = (statistics.median(ordered) * 1000, ordered[int(len(ordered) * 0.99) - 1] * 1000,
                      len(ordered) / seconds)
    return rows


def filesystem(path: Path) -> str:
    try:
        return subprocess.run(["df", "--output=source,fstype", str(path)], capture_output=True, text=True,
                              check=True).stdout.splitlines()[-1].strip()
    except (OSError, subprocess.CalledProcessError, IndexError):
        return "unknown filesystem"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=3000, help="per endpoint and client count")
    parser.add_argument("--clients", default="4,16", help="concurrent client threads, a comma-separated sweep")
    parser.add_argument("--dir", type=Path, default=None, help="where the database goes (default: a temp dir)")
    parser.add_argument("--in-process", action="store_true", help="run the clients in the server's process")
    args = parser.parse_args()
    sweep = [int(n) for n in args.clients.split(",") if n.strip()]
    if not sweep or min(sweep) < 1:
        parser.error("--clients takes positive counts separated by commas, e.g. 4,16")
    workdir = Path(tempfile.mkdtemp(prefix="perfbot-ack-", dir=args.dir))
    server, db = build_server(workdir)
    base = f"http://127.0.0.1:{server.effective_port}"
    body = push_payload()
    load, disk = os.getloadavg()[0], filesystem(workdir)
    pool = None if args.in_process else ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn"))
    try:
        rows = {clients: summary(measure(base, body, args.requests, clients, pool)) for clients in sweep}
    finally:
        if pool is not None:
            pool.shutdown()
    stored = DeliveryQueue(db).counts().get("pending", 0)
    server.close()
    db.dispose()
    shutil.rmtree(workdir)  # tens of megabytes of stored deliveries per run

    print(f"{args.requests} signed {len(body)}-byte push deliveries per endpoint and client count, waitress "
          f"(8 threads); clients {'in the server process' if args.in_process else 'in a process of their own'}; "
          f"database {workdir} on {disk}; load average {load:.2f} at start")
    header = f"{'':<18}" + "".join(f"{f'{n} clients':>22}" for n in sweep)
    print(header)
    for path in ("/bare", "/webhook"):
        for i, (label, unit) in enumerate((("p50", "ms"), ("p99", "ms"), ("throughput", "/s"))):
            cells = "".join(f"{rows[n][path][i]:>20.2f}{unit}" if unit == "ms" else f"{rows[n][path][i]:>20.0f}{unit}"
                            for n in sweep)
            print(f"{path + ' ' + label:<18}{cells}")
    for i, label in enumerate(("p50", "p99", "throughput")):
        print(f"{'webhook/bare ' + label:<18}" + "".join(
            f"{rows[n]['/webhook'][i] / rows[n]['/bare'][i]:>21.2f}x" for n in sweep))
    expected = args.requests * len(sweep)
    print(f"{stored} of {expected} deliveries stored")
    if stored != expected:
        raise SystemExit(f"{expected - stored} acknowledged deliveries are missing from the store")


if __name__ == "__main__":
    main()
