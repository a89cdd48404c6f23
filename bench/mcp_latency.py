"""How long an agent waits for `perfbot mcp`: each tool called over stdio, through the SDK's own client, on a
repository of N reports synced into a store.

Run: .venv/bin/python bench/mcp_latency.py [--reports 10000] [--calls 30] [--keep DIR]
The reports are the labelled dedup sets' reports (tests/data/dedup*), each copied under N / 92 slugs with its
title and context varied, committed in one git repository and synced with `perfbot sync` as a team would.
The server is started once; the figures are per call after it answered its first one, and the start itself.
"""
from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from mcp import Client
from mcp.client.stdio import StdioServerParameters

ROOT = Path(__file__).resolve().parents[1]
SETS = [ROOT / "tests" / "data" / name for name in ("dedup", "dedup_tune", "dedup_heldout")]
WORDS = ["runtime", "heap", "scheduler", "worker", "interaction", "node", "queue", "lock", "atomic", "copy", "match",
         "list", "tree", "string", "buffer", "cache", "branch", "kernel", "launch", "memory", "page", "socket"]


def make_repo(folder: Path, n: int) -> Path:
    """A git repository with `n` reports under devs/issues/, varied copies of the labelled sets' reports."""
    repo = folder / "runtime"
    (repo / "devs" / "issues").mkdir(parents=True)
    bases = sorted(p for data in SETS for p in (data / "devs" / "issues").glob("perf_*.md"))
    rng = random.Random(n)
    for i in range(n):
        base = bases[i % len(bases)]
        text = base.read_text()
        title_at = text.find("\n# ")
        if title_at >= 0:
            end = text.index("\n", title_at + 1)
            text = text[:end] + f" (case {i})\n\n" + " ".join(rng.sample(WORDS, 6)) + "." + text[end:]
        (repo / "devs" / "issues" / f"{base.stem}_{i:05d}.md").write_text(text)
    git = ["git", "-C", str(repo), "-c", "user.name=bench", "-c", "user.email=bench@example.com"]
    subprocess.run([*git, "init", "-q", "-b", "main"], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "reports"], check=True)
    return repo


async def measure(repo: Path, url: str, calls: int) -> dict[str, list[float]]:
    params = StdioServerParameters(command=sys.executable, args=["-c", "from bot.cli import main; main()", "mcp",
                                                                 "--repo", str(repo), "--db", url],
                                   env={"PYTHONPATH": str(ROOT)})
    draft = sorted((SETS[2] / "devs" / "issues").glob("perf_*.md"))[0].read_text()
    slug = sorted((repo / "devs" / "issues").glob("perf_*.md"))[0].stem
    asks = {"search_reports": {"query": "free list spinlock contention at 16 threads"},
            "show_report": {"slug": slug}, "lint_draft": {"text": draft},
            "dedup_draft": {"text": draft, "name": "devs/issues/perf_bench_draft.md"},
            "verification_status": {"slug": slug}}
    timings: dict[str, list[float]] = {name: [] for name in asks}
    started = time.perf_counter()
    async with Client(params, read_timeout_seconds=600) as client:
        await client.call_tool("show_report", {"slug": slug})
        timings["start, to the first answer"] = [time.perf_counter() - started]
        for _ in range(calls):
            for name, arguments in asks.items():
                began = time.perf_counter()
                result = await client.call_tool(name, arguments)
                timings[name].append(time.perf_counter() - began)
                if result.is_error:
                    raise SystemExit(f"{name}: {result.content}")
    return timings


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reports", type=int, default=10_000)
    parser.add_argument("--calls", type=int, default=30)
    parser.add_argument("--keep", type=Path, default=None, help="build the repository and store here, and reuse")
    args = parser.parse_args()
    folder = args.keep or Path(tempfile.mkdtemp(prefix="mcp_latency_"))
    url = f"sqlite:///{folder / 'perfbot.sqlite3'}"
    repo = folder / "runtime"
    if not repo.exists():
        began = time.perf_counter()
        make_repo(folder, args.reports)
        subprocess.run([sys.executable, "-c", "from bot.cli import main; main()", "sync", "--repo", str(repo),
                        "--db", url], check=True, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        print(f"{args.reports} reports written and synced in {time.perf_counter() - began:.0f} s")
    timings = asyncio.run(measure(repo, url, args.calls))
    print(f"{'tool':<28} {'calls':>5} {'p50':>9} {'p90':>9} {'max':>9}")
    for name, values in timings.items():
        values = sorted(values)
        p90 = values[min(len(values) - 1, int(len(values) * 0.9))]
        print(f"{name:<28} {len(values):>5} {statistics.median(values) * 1000:>7.0f}ms {p90 * 1000:>7.0f}ms "
              f"{values[-1] * 1000:>7.0f}ms")


if __name__ == "__main__":
    main()
