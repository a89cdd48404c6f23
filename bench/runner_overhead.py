"""What each runner adds to a measured time: the same program timed through the local runner without and with
the sandbox, and through the ssh runner on a private sshd on 127.0.0.1, interleaved round by round.

Run: .venv/bin/python bench/runner_overhead.py [--rounds 30]
Needs gcc, bubblewrap (scripts/ensure-bwrap) and sshd (scripts/ensure-sshd). The program is the demo's fixed
`sum` (a few milliseconds), the case where a fixed cost per run would hurt a ratio most. For each runner it
prints the median time the runner reports (what verification uses) and the median wall time seen by the
caller, and the reported median over the plain local runner's: near 1.00 means the runner's own cost is
kept out of the samples.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bot.adapters.runners.local import LocalRunner
from bot.adapters.runners.ssh import SshOptions, SshRunner
from bot.demo.create import create_demo
from bot.demo.sources import SUM_N
from tests.sshd import SshServer

BUILD = ("gcc", "-O2", "-o", "runtime", "runtime.c")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=30)
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="perfbot-overhead-"))
    demo = create_demo(root / "demo")
    server = SshServer().start()
    try:
        runners = {
            "local": LocalRunner("local", demo.path, root / "plain", build=BUILD, sandbox="none"),
            "local+sandbox": LocalRunner("sandboxed", demo.path, root / "sandboxed", build=BUILD, sandbox="bwrap"),
            "ssh 127.0.0.1": SshRunner("ssh", "127.0.0.1", options=SshOptions(
                server.client_key, server.known_hosts, server.root / "ctl"), repo_path=demo.path, port=server.port,
                path=f"{root}/remote", build=BUILD),
        }
        plans = {}
        for name, runner in runners.items():
            workspace = runner.prepare(demo.heads[demo.fix_branch])
            folder = runner.run_dir(workspace, "perf_boxed_sum")
            runner.write_file(folder / "program.bend", f"sum {SUM_N}\n")
            plans[name] = ([str(workspace / "runtime"), str(folder / "program.bend")], folder)
        reported = {name: [] for name in runners}
        wall = {name: [] for name in runners}
        for _ in range(args.rounds):
            for name, runner in runners.items():
                argv, cwd = plans[name]
                started = time.perf_counter()
                result = runner.run(argv, cwd, 30)
                wall[name].append(time.perf_counter() - started)
                assert result.ok, (name, result.stderr)
                reported[name].append(result.seconds)
        base = statistics.median(reported["local"])
        print(f"{args.rounds} rounds of `runtime sum {SUM_N}` (the demo's fix), runners interleaved")
        print(f"{'runner':<16} {'reported median':>16} {'wall median':>12} {'reported / local':>17}")
        for name in runners:
            print(f"{name:<16} {statistics.median(reported[name]) * 1000:>13.2f} ms "
                  f"{statistics.median(wall[name]) * 1000:>9.2f} ms {statistics.median(reported[name]) / base:>16.2f}x")
    finally:
        server.stop()


if __name__ == "__main__":
    main()
