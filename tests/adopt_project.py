"""Two runtimes that are not the demo, in real git repositories, for `perfbot init` and `perfbot check`.

`tally` (one C file, the walkthrough of docs/adopt.md): `./tally [--jobs N] PROGRAM.tl [N]` reads `tally N` and prints
the u24 sum of i % 7 for i < N, then statistics lines (`heap words:`, `steps:`) on every run. Its heap size is
a define the build must pass, renamed HEAP_CELLS -> HEAP_WORDS after the commit `old`; main is slow (an inner
loop per step), branch fix/perf_slow_tally is not.

`calc` (a Makefile building bin/calc): `bin/calc run [--threads N] FILE.calc` reads `add N`.

Each fences its reports' programs with its own tag (```tally, ```calc), which its `.perfbot.toml` declares.
"""
from __future__ import annotations

from pathlib import Path

from tests.gitrepo import RepoBuilder

TALLY = r"""
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifndef HEAP_WORDS
#error "build with -DHEAP_WORDS=65536"
#endif
static unsigned long heap[HEAP_WORDS];
static int usage(void) {
  fprintf(stderr, "usage: tally [--jobs N] PROGRAM.tl [N]\n  --jobs N   worker threads (default 1)\n");
  return 2;
}
int main(int argc, char **argv) {
  int a = 1;
  for (; a < argc && argv[a][0] == '-'; a++) {
    if (strcmp(argv[a], "--jobs") == 0 && a + 1 < argc) a++;
    else return usage();
  }
  if (a >= argc) return usage();
  const char *dot = strrchr(argv[a], '.');
  if (!dot || strcmp(dot, ".tl") != 0) { fprintf(stderr, "tally: %s: programs end in .tl\n", argv[a]); return 2; }
  FILE *f = fopen(argv[a], "r");
  char line[128];
  unsigned long n = 0;
  while (f && fgets(line, sizeof line, f)) if (line[0] != '#' && sscanf(line, "tally %lu", &n) == 1) break;
  if (a + 1 < argc) n = strtoul(argv[a + 1], NULL, 10);
  if (!n) { fprintf(stderr, "tally: no `tally N` line\n"); return 2; }
  unsigned acc = 0;
  for (unsigned long i = 0; i < n; i++) {
    SLOWDOWN
    heap[i % HEAP_WORDS] = i % 7;
    acc = (acc + (unsigned)(i % 7)) & 0xFFFFFFu;
  }
  printf("%u\n", acc);
  printf("heap words: %lu\nsteps: %lu\n", n < HEAP_WORDS ? n : (unsigned long)HEAP_WORDS, 3 * n);
  return 0;
}
"""
SLOW = TALLY.replace("SLOWDOWN", "for (volatile int k = 0; k < 60; k++) {}")
FAST = TALLY.replace("SLOWDOWN", "")
N = 20000
OUTPUT = sum(i % 7 for i in range(N)) & 0xFFFFFF
TRANSLATION = f"""#include <stdio.h>
int main(void) {{
  unsigned acc = 0;
  for (unsigned long i = 0; i < {N}; i++) acc = (acc + (unsigned)(i % 7)) & 0xFFFFFFu;
  printf("%u\\n", acc);
  return 0;
}}"""
REPORT = f"""---
track: seq
backend: c
threads: 1
ratio: 40
fix: fix/perf_slow_tally
---
# Every tally step spins in the dispatcher

## Context

A plain counting loop runs 40x slower than its C translation; every program pays it per step.

## Reproduction

```tally
tally {N}
```

```c
{TRANSLATION}
```

Both print `{OUTPUT}`.

## Measurements

| implementation | time (s) | machine | command |
| --- | --- | --- | --- |
| tally | 0.0400 | dev-box | `./tally main.tl` |
| C (gcc -O2) | 0.0010 | dev-box | `gcc -O2 t.c && ./a.out` |

## Root cause

`tally.c: main` spins an empty loop before each step.

## Fix

Branch `fix/perf_slow_tally` drops the loop.
"""


def build_tally(root: Path) -> tuple[RepoBuilder, dict[str, str]]:
    repo = RepoBuilder(root, branch="main")
    heads = {"old": repo.write("tally.c", SLOW.replace("HEAP_WORDS", "HEAP_CELLS")).commit("tally: a heap")}
    heads["main"] = repo.write("tally.c", SLOW).write("devs/issues/perf_slow_tally.md", REPORT) \
        .commit("tally: HEAP_CELLS is HEAP_WORDS; a report")
    repo.repo.git.checkout("-q", "-b", "fix/perf_slow_tally", heads["main"])
    heads["fix/perf_slow_tally"] = repo.write("tally.c", FAST).commit("tally: no spinning")
    repo.repo.git.checkout("-q", "main")
    return repo, heads


CALC = r"""
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
int main(int argc, char **argv) {
  if (argc < 3 || strcmp(argv[1], "run") != 0) {
    fprintf(stderr, "usage: calc run [--threads N] FILE.calc\n");
    return 2;
  }
  const char *file = argv[argc - 1];
  FILE *f = fopen(file, "r");
  unsigned long n = 0;
  if (!f || fscanf(f, "add %lu", &n) != 1) { fprintf(stderr, "calc: cannot read %s\n", file); return 2; }
  unsigned long acc = 0;
  for (unsigned long i = 0; i < n; i++) acc += i;
  printf("%lu\n", acc);
  return 0;
}
"""
MAKEFILE = "bin/calc: src/calc.c\n\tmkdir -p bin\n\t$(CC) -O2 -o bin/calc src/calc.c\n"
CALC_REPORT = REPORT.replace("tally 20000", "add 1000").replace(
    TRANSLATION, '#include <stdio.h>\nint main(void) {\n  unsigned long acc = 0;\n'
                 '  for (unsigned long i = 0; i < 1000; i++) acc += i;\n  printf("%lu\\n", acc);\n  return 0;\n}') \
    .replace(f"`{OUTPUT}`", "`499500`").replace("fix/perf_slow_tally", "unknown").replace("```tally", "```calc")


def build_calc(root: Path) -> RepoBuilder:
    repo = RepoBuilder(root, branch="main")
    repo.write("src/calc.c", CALC).write("Makefile", MAKEFILE).write("devs/issues/perf_slow_add.md", CALC_REPORT)
    repo.commit("calc and a report")
    return repo
