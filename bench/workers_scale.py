"""Worker scaling: one burst of pushes and bench runs drained by one `perfbot worker` process, then by two.

Run: .venv/bin/python bench/workers_scale.py [--pushes 60] [--bench-runs 2] [--rounds 1]
Needs PostgreSQL (./test.sh installs it) and gcc. A throwaway PostgreSQL server and the GitHub double are
started here; each round gets an empty database and its own repositories (file:// remotes), so both sides
do the same work: a push per repository (fetch, sync, audit, mirror to an issue) and bench runs of the
demo's C project (build base and head, five samples each). The workers start first and run their own
scheduled jobs; the clock runs from queuing the burst to its last delivery done. Every round is checked
like tests/reading/test_scale.py: each delivery claimed once and done, each repository synced once, each bench run
measured once. Rounds alternate (1, 2, 1, 2 ...) so drift on the machine hits both alike.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.github_double import GitHubDouble
from tests.postgres import PostgresServer
from tests.reading.test_scale import World, check_each_handled_once, machine_cpu_seconds, make_burst, run_round


def background_cores(seconds: float = 3.0) -> float:
    """How busy the machine is with nobody's work of ours running (it is shared)."""
    before = machine_cpu_seconds()
    time.sleep(seconds)
    return (machine_cpu_seconds() - before) / seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pushes", type=int, default=60, help="push deliveries, one repository each")
    parser.add_argument("--bench-runs", type=int, default=2, help="queued bench runs, one C project each")
    parser.add_argument("--rounds", type=int, default=1, help="rounds per side")
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="perfbot-scale-"))
    server = PostgresServer().start()
    double = GitHubDouble().start()
    results: dict[int, list] = {1: [], 2: []}
    try:
        world = World(root, double, "")
        for round_no in range(args.rounds):
            for workers in (1, 2):
                tag = f"r{round_no}w{workers}"
                world.db_url = server.create_database(f"scale_{tag}")
                burst = make_burst(world, tag, args.pushes, args.bench_runs)
                idle = background_cores()
                result = run_round(world, burst, workers, tag)
                check_each_handled_once(world, burst, result)
                result.cpu["background"] = idle
                results[workers].append((len(burst.deliveries), result))
                print(f"  round {round_no + 1}, {workers} worker(s): {result.seconds:.1f} s "
                      f"(machine busy with other work before it: {idle:.2f} cores)", flush=True)
        problems = double.problems()
        if problems:
            raise SystemExit("the GitHub double saw problems:\n" + "\n".join(problems))
    finally:
        double.stop()
        server.stop()

    def median(workers: int, value) -> float:
        return statistics.median(value(n, r) for n, r in results[workers])

    size = results[1][0][0]
    print(f"{size} deliveries ({args.pushes} pushes, {args.bench_runs} bench runs) on PostgreSQL, "
          f"median of {args.rounds} round(s) per side")
    print(f"{'workers':<8} {'wall':>8} {'throughput':>12} {'worker CPU':>11} {'double CPU':>11} {'busy during':>13} "
          f"{'busy before':>13}")
    for workers in (1, 2):
        wall = median(workers, lambda n, r: r.seconds)
        print(f"{workers:<8} {wall:>7.1f}s {median(workers, lambda n, r: n / r.seconds):>10.2f}/s "
              f"{median(workers, lambda n, r: r.cpu['workers']):>10.1f}s "
              f"{median(workers, lambda n, r: r.cpu['harness']):>10.1f}s "
              f"{median(workers, lambda n, r: r.cpu['machine'] / r.seconds):>7.2f} cores "
              f"{median(workers, lambda n, r: r.cpu['background']):>7.2f} cores")
    ratio = median(2, lambda n, r: n / r.seconds) / median(1, lambda n, r: n / r.seconds)
    print(f"two workers / one: throughput {ratio:.2f}x")


if __name__ == "__main__":
    main()
