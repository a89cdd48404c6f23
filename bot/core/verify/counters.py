"""Instruction counts: the argv prefix of a counter (perf stat, or valgrind's cachegrind) and its number, parsed.

A count of retired instructions does not move with the host's load, frequency scaling or page cache, so a
ratio of counts decides where wall times scatter. perf needs hardware counters (often absent in VMs:
it prints `<not supported>`); cachegrind simulates them anywhere, 20-50x slower.
"""
from __future__ import annotations

import re

PERF = ("perf", "stat", "-x", ",", "-e", "instructions:u", "--")
CACHEGRIND = ("valgrind", "--tool=cachegrind", "--cache-sim=no", "--cachegrind-out-file=/dev/null")
COUNTERS = {"perf": PERF, "cachegrind": CACHEGRIND}
_PERF_LINE = re.compile(r"^(\d+),[^,\n]*,instructions(?::u)?,", re.MULTILINE)
_CACHEGRIND_LINE = re.compile(r"^==\d+==\s+I\s+refs:\s+([\d,]+)", re.MULTILINE)


def counted(counter: str, argv: list[str]) -> list[str]:
    return [*COUNTERS[counter], *argv]


def instructions(counter: str, stderr: str) -> int | None:
    """The count the counter wrote at the end of the run's stderr, or None when it wrote none."""
    pattern = _PERF_LINE if counter == "perf" else _CACHEGRIND_LINE
    found = pattern.findall(stderr)
    return int(found[-1].replace(",", "")) if found else None
