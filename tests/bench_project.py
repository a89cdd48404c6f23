"""A small C project standing in for the runtime, in a real git repository, with fix branches that really
are (or are not) faster: what verification tests measure.

The "runtime" reads a program file `sum N` and computes the sum of i*i mod 2^24 for i < N. On main it boxes
every intermediate value in a heap node (malloc and free per step): slow, like the runtime's u24 boxing.
"""
from __future__ import annotations

from pathlib import Path

from tests.gitrepo import RepoBuilder

N = 5_000_000
SLOW = r"""
#include <stdio.h>
#include <stdlib.h>
typedef struct { unsigned v; } Box;
static Box *volatile sink;  /* the boxes escape, so the compiler keeps every allocation */
int main(int argc, char **argv) {
  FILE *f = fopen(argv[1], "r"); unsigned long n = 0;
  if (!f || fscanf(f, "sum %lu", &n) != 1) { fprintf(stderr, "bad program\n"); return 2; }
  Box *acc = malloc(sizeof *acc); acc->v = 0;
  for (unsigned long i = 0; i < n; i++) {
    for (int k = 0; k < 4; k++) { Box *t = malloc(sizeof *t); t->v = acc->v ^ k; sink = t; free(t); }
    Box *next = malloc(sizeof *next); next->v = (acc->v + ((unsigned)(i * i) & 0xFFFFFF)) & 0xFFFFFF;
    free(acc); acc = next;
  }
  printf("%u\n", acc->v); return 0;
}
"""
FAST = r"""
#include <stdio.h>
int main(int argc, char **argv) {
  FILE *f = fopen(argv[1], "r"); unsigned long n = 0;
  if (!f || fscanf(f, "sum %lu", &n) != 1) { fprintf(stderr, "bad program\n"); return 2; }
  unsigned acc = 0;
  for (unsigned long i = 0; i < n; i++) acc = (acc + ((unsigned)(i * i) & 0xFFFFFF)) & 0xFFFFFF;
  printf("%u\n", acc); return 0;
}
"""
WRONG = FAST.replace('printf("%u\\n", acc)', 'printf("%u\\n", acc + 1)')
HANGS = FAST.replace("unsigned long i = 0; i < n; i++", "volatile unsigned long i = 0; i < n || 1; i++")
BROKEN = FAST.replace("int main", "int main(")
TRANSLATION = r"""#include <stdio.h>
int main(void) {
  unsigned acc = 0;
  for (unsigned long i = 0; i < %d; i++) acc = (acc + ((unsigned)(i * i) & 0xFFFFFF)) & 0xFFFFFF;
  printf("%%u\n", acc);
  return 0;
}""" % N
CONFIG = """[build]
command = ["gcc", "-O2", "-o", "runtime", "runtime.c"]

[run]
language = ["./runtime", "{file}"]
c_compile = ["gcc", "-O2", "-o", "{out}", "{file}"]

[verify]
min_samples = 5
max_samples = 12
budget_seconds = 60
timeout_seconds = 5
memory_mb = 512
"""


def report(ratio: float = 12.0) -> str:
    return f"""---
track: seq
backend: c
threads: 1
ratio: {ratio}
fix: fix/perf_boxed_sum
---
# Every step of a sum boxes its value

## Context

Summing squares in the runtime allocates a heap node per intermediate value.

## Reproduction

```bend
sum {N}
```

```c
{TRANSLATION}
```

## Measurements

| implementation | time (s) | machine | command |
| --- | --- | --- | --- |
| bend | {0.05 * ratio:.3f} | ci | `./runtime program.bend` |
| C | 0.050 | ci | `./translation` |

## Root cause

Boxing: a malloc and a free per step.

## Fix

See `fix/perf_boxed_sum`: keep the value unboxed.
"""


def build_project(root: Path) -> tuple[RepoBuilder, dict[str, str]]:
    """main plus branches: the real fix, a non-fix, a fix that breaks the output, one that hangs, one that won't build."""
    repo = RepoBuilder(root, branch="main")
    repo.write("runtime.c", SLOW).write(".perfbot.toml", CONFIG).write("devs/issues/perf_boxed_sum.md", report())
    main = repo.commit("runtime and the report")
    heads = {"main": main}
    for branch, source in (("fix/perf_boxed_sum", FAST), ("not-a-fix", SLOW.replace("Box *acc", "Box * acc")),
                           ("wrong-output", WRONG), ("hangs", HANGS), ("broken", BROKEN)):
        repo.repo.git.checkout("-q", "-b", branch, main)
        heads[branch] = repo.write("runtime.c", source).commit(f"runtime: {branch}")
    repo.repo.git.checkout("-q", "main")
    return repo, heads


# A parallel stand-in: `work MS` is MS milliseconds of work, split over --threads on the fix branch and
# serialised on main. Sleeping stands for the work so the measured speedup does not depend on how many
# cores the test machine has free.
PAR_RUNTIME = r"""
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
int main(int argc, char **argv) {
  FILE *f = fopen(argv[1], "r"); unsigned long ms = 0; int threads = argc > 3 ? atoi(argv[3]) : 1;
  if (!f || fscanf(f, "work %lu", &ms) != 1 || threads < 1) { fprintf(stderr, "bad program\\n"); return 2; }
  usleep((useconds_t)(ms * 1000 / DIVIDE));
  printf("done %lu\\n", ms); return 0;
}
"""
PAR_CONFIG = CONFIG.replace('language = ["./runtime", "{file}"]', 'language = ["./runtime", "{file}", "--threads", "{threads}"]')


def par_report() -> str:
    return f"""---
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
int main(void) {{ printf("done 240\\n"); return 0; }}
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
    repo.write("runtime.c", PAR_RUNTIME.replace("DIVIDE", "1")).write(".perfbot.toml", PAR_CONFIG)
    main = repo.write("devs/issues/perf_serial_work.md", par_report()).commit("par runtime and report")
    repo.repo.git.checkout("-q", "-b", "fix/perf_serial_work", main)
    fix = repo.write("runtime.c", PAR_RUNTIME.replace("DIVIDE", "threads")).commit("runtime: split the work")
    repo.repo.git.checkout("-q", "main")
    return repo, {"main": main, "fix/perf_serial_work": fix}
