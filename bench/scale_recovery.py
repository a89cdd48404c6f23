"""Scale-out: throughput with 1, 3 and 8 `perfbot worker` processes, and how fast a dead or stopped worker's work
is taken over.

Run: .venv/bin/python bench/scale_recovery.py [--pushes 40] [--bench-runs 1] [--workers 1,3,8] [--lease 30]
Needs PostgreSQL (./test.sh installs it) and gcc. A throwaway PostgreSQL server and the GitHub double are
started here; `file://` remotes stand in for GitHub's git.

Throughput: each round gets an empty database and its own repositories, and drains the same burst (a push per
repository: fetch, sync, audit, mirror to an issue; and bench runs of the demo's C project), checked like
tests/reading/test_scale.py (each delivery claimed once and done, each repository synced once, each bench run
measured once, one issue per record).

Recovery, with the lease the deployment uses (PERFBOT_LEASE_SECONDS, 30 by default) and a second worker (two
threads and the comment lane), started first and frozen while the first takes the job: the first is SIGKILLed in
the middle of a long push, and of a bench run, and SIGTERMed in the middle of a push; the second resumes at the
signal, and the clock runs from the signal to its claim of that delivery (its generation 2).
"""
from __future__ import annotations

import argparse
import json
import signal
import sys
import tempfile
import time
from pathlib import Path

from sqlalchemy import select

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bot.adapters.store.bench import bench_store
from bot.adapters.store.engine import Database
from bot.adapters.store.queue import DeliveryQueue, NewDelivery
from bot.adapters.store.service_models import Delivery
from tests.github_double import GitHubDouble
from tests.postgres import PostgresServer
from tests.reading import test_scale
from tests.reading.test_scale import World, check_each_handled_once, make_burst, run_round, wait_for
from tests.service.test_scale_out import push_repo, row, service_process


def throughput(world: World, server: PostgresServer, workers: int, pushes: int, bench_runs: int) -> float:
    tag = f"t{workers}"
    world.db_url = server.create_database(f"scale_{tag}")
    burst = make_burst(world, tag, pushes, bench_runs)
    result = run_round(world, burst, workers, tag)
    check_each_handled_once(world, burst, result)
    return len(burst.deliveries) / result.seconds


def idle(db: Database) -> bool:
    """The hour's reconcile (which every worker queues as it starts) was handled, and nothing runs now."""
    with db.session() as session:
        rows = session.execute(select(Delivery.event, Delivery.status)).all()
    reconciles = [status for event, status in rows if event == "perfbot.reconcile"]
    return bool(reconciles) and set(reconciles) <= {"done", "failed"} and all(s != "running" for _, s in rows)


def recovery(world: World, server: PostgresServer, lease: float, how: str) -> float:
    """Seconds from the first worker's signal to the second worker's claim of the delivery it held."""
    world.db_url = server.create_database(f"recover_{how.replace('-', '_')}")
    db = Database(world.db_url)
    env = {"PERFBOT_LEASE_SECONDS": str(lease)}
    try:
        if how == "kill-bench":
            test_scale.BENCH_SAMPLES = 30
            burst = make_burst(world, "rb", 0, 1)
            delivery, run_id = burst.deliveries[0], burst.bench_runs[0]
            started = lambda: bench_store.get_run(db, run_id).progress.taken >= 2  # noqa: E731
        else:
            name = f"team/{how}"
            payload = push_repo(world, name, 16)
            delivery = NewDelivery(f"{how}-push", "push", None, name, None, json.dumps(payload))
            started = lambda: row(db, delivery.id).status == "running"  # noqa: E731
        # The second worker is started first and frozen (SIGSTOP) once idle: warm, it claims nothing while the first
        # takes the job, and its start-up (10 s and more on a busy machine) can neither enter the figure nor outlast
        # a short job. Two general threads (and the comment lane): the scheduled reconcile, which waits for the
        # repository the first worker holds, must not keep the second from claiming what is handed back.
        second = service_process(world, f"{how}-second", "worker", "--workers", "3", **env).start()
        first = service_process(world, f"{how}-first", "worker", PERFBOT_GITHUB_WRITE_INTERVAL="1", **env)
        try:
            wait_for(lambda: second.running() and idle(db), 300, "the second worker to start and finish its own jobs")
            second.process.send_signal(signal.SIGSTOP)
            DeliveryQueue(db).enqueue(delivery)
            first.start()
            wait_for(lambda: first.running() and started(), 600, "the first worker to be mid-job")
            if row(db, delivery.id).status != "running":
                raise SystemExit(f"{how}: the job ended before the signal; nothing to take over")
            second.process.send_signal(signal.SIGCONT)
            began = time.monotonic()
            # The signal alone: the clock must not wait for the first process to exit.
            first.process.send_signal(signal.SIGKILL if how.startswith("kill") else signal.SIGTERM)
            wait_for(lambda: row(db, delivery.id).lease_generation >= 2, 10 * lease + 120, "the takeover", poll=0.05)
            seconds = time.monotonic() - began
        finally:
            second.process.send_signal(signal.SIGCONT)
            first.stop()
            second.stop()
        return seconds
    finally:
        db.dispose()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pushes", type=int, default=40, help="push deliveries, one repository each")
    parser.add_argument("--bench-runs", type=int, default=1, help="queued bench runs, one C project each")
    parser.add_argument("--workers", default="1,3,8", help="worker processes per round, comma-separated")
    parser.add_argument("--lease", type=float, default=30.0, help="PERFBOT_LEASE_SECONDS for the recovery runs")
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="perfbot-scale-"))
    server = PostgresServer().start()
    double = GitHubDouble().start()
    rates: dict[int, float] = {}
    recoveries: dict[str, float] = {}
    try:
        world = World(root, double, "")
        for workers in (int(w) for w in args.workers.split(",") if w):  # --workers "": recovery alone
            rates[workers] = throughput(world, server, workers, args.pushes, args.bench_runs)
            print(f"  {workers} worker(s): {rates[workers]:.2f} deliveries/s", flush=True)
        for how in ("kill-push", "term-push", "kill-bench"):
            recoveries[how] = recovery(world, server, args.lease, how)
            print(f"  {how}: taken over after {recoveries[how]:.1f} s", flush=True)
        problems = double.problems()
        if problems:
            raise SystemExit("the GitHub double saw problems:\n" + "\n".join(problems))
    finally:
        double.stop()
        server.stop()
    size = args.pushes + args.bench_runs
    if rates:
        print(f"\n{size} deliveries ({args.pushes} pushes, {args.bench_runs} bench run(s)) on PostgreSQL")
        print(f"{'workers':<8} {'throughput':>12} {'vs one':>8}")
    for workers, rate in rates.items():
        print(f"{workers:<8} {rate:>10.2f}/s {rate / rates[min(rates)]:>7.2f}x")
    print(f"\nrecovery with a {args.lease:g} s lease (signal to the other worker's claim)")
    for how, seconds in recoveries.items():
        print(f"{how:<12} {seconds:>6.1f} s")


if __name__ == "__main__":
    main()
