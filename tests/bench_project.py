"""A small C project standing in for the runtime, in a real git repository, with fix branches that really
are (or are not) faster: what verification tests measure.

The runtime and its real fix are the demo's (`bot/demo`): it reads a program file `sum N` and computes the
sum of i*i mod 2^24 for i < N. On main it boxes every intermediate value in a heap node (malloc and free
per step): slow, like the runtime's u24 boxing, and its -s step count (a box or an add is one step) is 6x
the fix's. Here it also gets branches that fail in every other way.
"""
from __future__ import annotations

from pathlib import Path

from bot.demo.reports import SUM_TRANSLATION, boxed_sum_report
from bot.demo.sources import RUNTIME_FIX, RUNTIME_MAIN, SETTINGS, SUM_N
from tests.gitrepo import RepoBuilder

N = SUM_N
SLOW = RUNTIME_MAIN
FAST = RUNTIME_FIX
TRANSLATION = SUM_TRANSLATION


def _variant(source: str, old: str, new: str) -> str:
    assert old in source, f"{old!r} is no longer in the demo runtime: update this variant"
    return source.replace(old, new)


# The demo's settings without its runner table (tests append the runners they need), running the runtime with
# -s: its step count is captured beside each sample and dropped before outputs are compared. A shared test
# machine is often busier than its cores; the service would then measure every run again later (core/verify/noise.py),
# which tests/verify/test_noise.py tests on its own, so here no load counts as busy.
WALL_CONFIG = _variant(SETTINGS, 'language = ["./runtime", "{file}"]', """language = ["./runtime", "-s", "{file}"]
output = "normalize"
normalize = [["(?m)^- [A-Z]+: .*$", ""]]
metrics = {steps = "- STEPS: ([0-9]+)", span = "- SPAN: ([0-9]+)"}""") + "busy_load = 1000\n"
# Verdicts in tests are decided on counts the programs print, the same on every run however busy the machine and
# still computed by the same sampling and intervals: a seq report on the runtime's step count against the count
# its C translation prints, a par report on its span (the longest thread's work) at one thread and at N.
CONFIG = WALL_CONFIG + 'measure = {seq = "metric:steps", par = "metric:span"}\n'
# What the GitHub Actions bench script can do: exact outputs timed in wall time (reports then use counted=False).
PLAIN_CONFIG = SETTINGS + "busy_load = 1000\n"


WRONG = _variant(FAST, 'printf("%u\\n", sum(n))', 'printf("%u\\n", sum(n) + 1)')
HANGS = _variant(FAST, "for (unsigned long i = 0; i < n; i++) acc = U24(acc + U24((unsigned)(i * i)))",
                 "for (volatile unsigned long i = 0; i < n || 1; i++) acc = U24(acc + U24((unsigned)(i * i)))")
BROKEN = _variant(FAST, "int main", "int main(")
NOT_A_FIX = _variant(SLOW, "Box *acc", "Box * acc")


def report(ratio: float = 12.0, counted: bool = True) -> str:
    """The demo's report; `counted=False` drops the step count its C translation prints, for exact outputs."""
    text = boxed_sum_report(0.05 * ratio, 0.05, fix="fix/perf_boxed_sum")
    return text if counted else "".join(line for line in text.splitlines(keepends=True) if "- STEPS:" not in line)


def build_project(root: Path) -> tuple[RepoBuilder, dict[str, str]]:
    """main plus branches: the real fix, a non-fix, a fix that breaks the output, one that hangs, one that won't
    build."""
    repo = RepoBuilder(root, branch="main")
    repo.write("runtime.c", SLOW).write(".perfbot.toml", CONFIG).write("devs/issues/perf_boxed_sum.md", report())
    main = repo.commit("runtime and the report")
    heads = {"main": main}
    for branch, source in (("fix/perf_boxed_sum", FAST), ("not-a-fix", NOT_A_FIX),
                           ("wrong-output", WRONG), ("hangs", HANGS), ("broken", BROKEN)):
        repo.repo.git.checkout("-q", "-b", branch, main)
        heads[branch] = repo.write("runtime.c", source).commit(f"runtime: {branch}")
    repo.repo.git.checkout("-q", "main")
    return repo, heads


# A parallel stand-in: `work N` is N units of work, split over --threads on the fix branch and done by one
# thread on main. Like a runtime that counts its work per worker, it prints its span, the longest thread's share:
# what the speedup is measured in (metric:span), the same on every run however busy the machine.
PAR_RUNTIME = r"""
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv) {
  FILE *f = fopen(argv[1], "r"); unsigned long work = 0; int threads = argc > 3 ? atoi(argv[3]) : 1;
  if (!f || fscanf(f, "work %lu", &work) != 1 || threads < 1) { fprintf(stderr, "bad program\n"); return 2; }
  int parts = SPLIT;
  printf("done %lu\n- SPAN: %lu\n", work, (work + parts - 1) / parts); return 0;
}
"""
PAR_CONFIG = CONFIG.replace('language = ["./runtime", "-s", "{file}"]',
                            'language = ["./runtime", "{file}", "--threads", "{threads}"]')


def par_report() -> str:
    return """---
track: par
backend: c
threads: 2
ratio: 2.0
fix: fix/perf_serial_work
---
# Work does not spread over threads

## Context

Two threads run no faster than one.

## Reproduction

```bend
work 240
```

```c
#include <stdio.h>
int main(void) { printf("done 240\\n"); return 0; }
```

## Measurements

| implementation | threads | time (s) | machine | command |
| --- | ---: | --- | --- | --- |
| bend | 1 | 0.240 | ci | `./runtime program.bend --threads 1` |
| bend | 2 | 0.240 | ci | `./runtime program.bend --threads 2` |

## Root cause

unknown

## Fix

unknown
"""


def build_par_project(root: Path) -> tuple[RepoBuilder, dict[str, str]]:
    repo = RepoBuilder(root, branch="main")
    repo.write("runtime.c", PAR_RUNTIME.replace("SPLIT", "1")).write(".perfbot.toml", PAR_CONFIG)
    main = repo.write("devs/issues/perf_serial_work.md", par_report()).commit("par runtime and report")
    repo.repo.git.checkout("-q", "-b", "fix/perf_serial_work", main)
    fix = repo.write("runtime.c", PAR_RUNTIME.replace("SPLIT", "threads")).commit("runtime: split the work")
    repo.repo.git.checkout("-q", "main")
    return repo, {"main": main, "fix/perf_serial_work": fix}


# A history older than perfbot: the u24 mask is a define the build passes, renamed U24_MASK -> WORD_MASK
# after the fix, and `.perfbot.toml`, the report and a build script arrive only on top. The build script,
# kept on the default branch, builds every revision: it looks at the checkout it is given.
_MASK_LINE = "#define U24(x) ((x) & 0xFFFFFFu)  /* values are u24: they wrap mod 2^24 */"


def _masked(source: str, define: str) -> str:
    return _variant(source, _MASK_LINE, f'#ifndef {define}\n#error "build with -D{define}=0xFFFFFFu"\n#endif\n'
                                        f"#define U24(x) ((x) & {define})")


BUILD_SCRIPT = """#!/bin/sh
# Builds any revision of the runtime: $1 is the checkout, $2 the commit. The mask define was renamed
# from U24_MASK to WORD_MASK; older commits still need the old name.
set -eu
cd "$1"
if grep -q WORD_MASK runtime.c; then mask=WORD_MASK; else mask=U24_MASK; fi
echo "$2 $mask" > build.log
exec gcc -O2 "-D$mask=0xFFFFFFu" -o runtime runtime.c
"""
SCRIPT_CONFIG = _variant(CONFIG, 'command = ["gcc", "-O2", "-o", "runtime", "runtime.c"]',
                         'script = ".perfbot/build.sh"            # run as: .perfbot/build.sh CHECKOUT SHA')


def build_history_project(root: Path, plain: bool = False) -> tuple[RepoBuilder, dict[str, str]]:
    """`old-slow` and `old-fast`, the real before/after pair, predate the rename, the config and the report;
    `plain`: the configuration and report the GitHub Actions bench script can run (PLAIN_CONFIG)."""
    config = _variant(PLAIN_CONFIG, 'command = ["gcc", "-O2", "-o", "runtime", "runtime.c"]',
                      'script = ".perfbot/build.sh"') if plain else SCRIPT_CONFIG
    repo = RepoBuilder(root, branch="main")
    heads = {"old-slow": repo.write("runtime.c", _masked(SLOW, "U24_MASK")).commit("runtime: box every value"),
             "old-fast": repo.write("runtime.c", _masked(FAST, "U24_MASK")).commit("runtime: unbox the accumulator"),
             "renamed": repo.write("runtime.c", _masked(FAST, "WORD_MASK")).commit("runtime: U24_MASK is WORD_MASK")}
    heads["main"] = repo.write(".perfbot.toml", config).write(".perfbot/build.sh", BUILD_SCRIPT) \
        .write("devs/issues/perf_boxed_sum.md",
               report(counted=not plain)).commit("adopt perfbot: its config, build script, a report")
    return repo, heads
