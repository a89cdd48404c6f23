"""A runtime whose CLI is not the demo's, in real git repositories: what the runtime-fitting verify tests drive.

`./hvm run main.hvm4 -T8 -C1 -s [N]` reads `fold N` from the program file (argv N overrides it) and prints
`#Tup{Xn,Yn}` (X the u24 sum of i % 7 for i < N, Y = N % 1000), like an interaction-calculus runtime; `-s`
adds `- ITRS:` (deterministic: 3 per step, and on main one per turn of the slow inner loop each step runs),
`- TIME:` and `- MIPS:` lines (not deterministic), `-v` a banner line first. Branch fix removes the inner
loop; branch old is the previous runtime (as fast as the fix). Verdicts are decided on ITRS, which the C
translation prints too, or on instructions: never on a time a busy machine can stretch. A second repository
holds another implementation with its own CLI
(`./bin/oldrt --threads N FILE [N]`) and build, for a `[references.NAME]` table.
"""
from __future__ import annotations

from pathlib import Path

from tests.gitrepo import RepoBuilder

N = 300_000  # counts decide the verdicts: a size that runs in milliseconds is enough
RUNTIME = r"""
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#define U24(x) ((x) & 0xFFFFFFu)
int main(int argc, char **argv) {
  int stats = 0, verbose = 0; const char *file = NULL; unsigned long n = 0, given = 0;
  if (argc < 3 || strcmp(argv[1], "run") != 0) {
    fprintf(stderr, "usage: hvm run FILE [-T N] [-C1] [-s] [N]\n"); return 2;
  }
  for (int a = 2; a < argc; a++) {
    if (strcmp(argv[a], "-s") == 0) stats = 1;
    else if (strcmp(argv[a], "-v") == 0) verbose = 1;
    else if (strncmp(argv[a], "-T", 2) == 0 || strncmp(argv[a], "-C", 2) == 0) continue;
    else if (!file) file = argv[a];
    else given = strtoul(argv[a], NULL, 10);
  }
  const char *dot = file ? strrchr(file, '.') : NULL;
  if (!dot || strcmp(dot, ".hvm4") != 0) {
    fprintf(stderr, "hvm: %s is not a .hvm4 file\n", file ? file : "-"); return 2;
  }
  FILE *f = fopen(file, "r");
  if (!f || fscanf(f, "fold %lu", &n) != 1) { fprintf(stderr, "hvm: cannot read %s\n", file); return 2; }
  if (given) n = given;
  if (verbose) printf("hvm: loaded %s\n", file);
  clock_t start = clock();
  unsigned acc = 0;
  unsigned long itrs = 3 * n;
  for (unsigned long i = 0; i < n; i++) {
    SLOWDOWN
    acc = U24(acc + (unsigned)(i % 7));
  }
  double seconds = (double)(clock() - start) / CLOCKS_PER_SEC;
  printf("#Tup{%un,%lun}\n", acc, n % 1000);
  if (stats) printf("- ITRS: %lu\n- TIME: %.4fs\n- MIPS: %.2f\n", itrs, seconds, itrs / (seconds + 1e-9) / 1e6);
  return 0;
}
"""
SLOW = RUNTIME.replace("SLOWDOWN", "for (volatile int k = 0; k < 80; k++) itrs++;")
FAST = RUNTIME.replace("SLOWDOWN", "")
BUILD = '["gcc", "-O2", "-o", "hvm", "hvm.c"]'

OTHER_RUNTIME = r"""
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#define U24(x) ((x) & 0xFFFFFFu)
int main(int argc, char **argv) {
  if (argc < 4 || strcmp(argv[1], "--threads") != 0) {
    fprintf(stderr, "usage: oldrt --threads N FILE [N]\n"); return 2;
  }
  FILE *f = fopen(argv[3], "r"); unsigned long n = 0;
  if (!f || fscanf(f, "fold %lu", &n) != 1) return 2;
  if (argc > 4) n = strtoul(argv[4], NULL, 10);
  unsigned acc = 0;
  for (unsigned long i = 0; i < n; i++) acc = U24(acc + (unsigned)(i % 7));
  printf("#Tup{%un,%lun}\n- ITRS: %lu\n", acc, n % 1000, 3 * n);
  return 0;
}
"""


def expected(n: int = N, suffix: str = "") -> str:
    """What the runtime prints for size n (with `suffix` "n"), and the C translation (without)."""
    total = sum(i % 7 for i in range(n)) & 0xFFFFFF
    return f"#Tup{{{total}{suffix},{n % 1000}{suffix}}}"


def translation(suffix: str = "") -> str:
    """The C translation; `suffix` "n" prints exactly what the runtime prints without -s, "" the plain numbers
    and the runtime's count for the same work (3 interactions a step), which normalizing drops."""
    count = "" if suffix else '\n  printf("- ITRS: %lu\\n", 3 * n);'
    return f"""#include <stdio.h>
#include <stdlib.h>
#define U24(x) ((x) & 0xFFFFFFu)
int main(int argc, char **argv) {{
  unsigned long n = argc > 1 ? strtoul(argv[1], NULL, 10) : {N};
  unsigned acc = 0;
  for (unsigned long i = 0; i < n; i++) acc = U24(acc + (unsigned)(i % 7));
  printf("#Tup{{%u{suffix},%lu{suffix}}}\\n", acc, n % 1000);{count}
  return 0;
}}"""


def config(language: str = '["./hvm", "run", "{file}", "-T{threads}", "-C1", "-s", "{input}"]',
           run_extra: str = 'output = "normalize"\n'
                            'normalize = [["(?m)^- [A-Z]+:.*$", ""], ["(\\\\d+)n\\\\b", "\\\\1"]]\n'
                            'metrics = {itrs = "- ITRS: ([0-9]+)", mips = "- MIPS: ([0-9.]+)"}',
           verify_extra: str | None = None, tail: str = "", max_samples: int = 30) -> str:
    if verify_extra is None:  # decided on the interaction count wherever the runtime's metrics are read
        verify_extra = 'measure = "metric:itrs"' if "metrics =" in run_extra else ""
    return f"""[build]
command = {BUILD}

[run]
program = "main.hvm4"
language = {language}
{run_extra}

[verify]
min_samples = 5
max_samples = {max_samples}
budget_seconds = 60
timeout_seconds = 30
memory_mb = 512
{verify_extra}
{tail}"""


def report(reference: str | None = None, inputs: str | None = None, c_suffix: str = "", fence: str = "hvm4") -> str:
    extra = (f"reference: {reference}\n" if reference else "") + (f"inputs: {inputs}\n" if inputs else "")
    c_block = "" if reference else f"```c\n{translation(c_suffix)}\n```\n"
    return f"""---
track: seq
backend: c
threads: 1
ratio: 6.0
fix: fix
{extra}---
# A fold runs 6x slower than it should

## Context

Every fold pays for an inner loop it does not need.

## Reproduction

```{fence}
fold {N}
```

{c_block}
## Measurements

| implementation | time (s) | machine | command |
| --- | --- | --- | --- |
| hvm | 0.060 | ci | `./hvm run main.hvm4 -T1 -C1 -s` |
| C (gcc -O2) | 0.010 | ci | `./a.out` |

## Root cause

unknown

## Fix

unknown
"""


def build_runtime_project(root: Path) -> tuple[RepoBuilder, dict[str, str], Path]:
    """The runtime's repository (main slow, fix and old fast) and another implementation's own repository."""
    repo = RepoBuilder(root / "hvm", branch="main")
    repo.write("hvm.c", FAST).write(".perfbot.toml", config())
    old = repo.commit("the previous runtime")
    main = repo.write("hvm.c", SLOW).commit("runtime: an inner loop per step")
    repo.repo.git.branch("old", old)
    repo.repo.git.checkout("-q", "-b", "fix", main)
    fix = repo.write("hvm.c", FAST).commit("runtime: drop the inner loop")
    repo.repo.git.checkout("-q", "main")
    other = RepoBuilder(root / "oldrt", branch="trunk")
    other.write("src/oldrt.c", OTHER_RUNTIME).write("bin/.keep", "").commit("another implementation")
    return repo, {"main": main, "fix": fix, "old": old}, other.root
