"""`perfbot demo --runtime PATH`: the runtime docs/adopt.md adopts perfbot on, as a real git repository.

`tally` is a runtime as teams keep them: its one C file under `src/`, its build line in the README (no Makefile
at the root), programs `*.tl` in `examples/`, a report in `devs/issues/` that fences its program ```tally, and a
history: the tag `v0.1` is a runtime that does not take `--jobs N` yet (the commit after it adds it), so checking
an old commit needs a build script. `-s` prints statistics lines (`steps:`, `heap words:`).
"""
from __future__ import annotations

from pathlib import Path

import git

from bot.demo.create import BRANCH, Writer
from bot.errors import Invalid

OLD_TAG = "v0.1"
SLUG = "perf_slow_tally"
N = 20000
OUTPUT = sum(i % 7 for i in range(N)) & 0xFFFFFF

_SOURCE = r"""#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifndef HEAP_WORDS
#define HEAP_WORDS 65536
#endif
static unsigned long heap[HEAP_WORDS];

static int usage(FILE *to, int code) {
  fputs("usage: tally USAGE PROGRAM.tl\n" OPTIONS "  -s        print statistics after the result\n", to);
  return code;
}

int main(int argc, char **argv) {
  int a = 1, stats = 0;
  for (; a < argc && argv[a][0] == '-'; a++) {
    if (!strcmp(argv[a], "--help") || !strcmp(argv[a], "-h")) return usage(stdout, 0);
    JOBS
    else if (!strcmp(argv[a], "-s")) stats = 1;
    else { fprintf(stderr, "tally: unknown option %s\n", argv[a]); return usage(stderr, 2); }
  }
  if (a >= argc) return usage(stderr, 2);
  FILE *f = fopen(argv[a], "r");
  char line[128];
  unsigned long n = 0;
  while (f && fgets(line, sizeof line, f)) if (line[0] != '#' && sscanf(line, "tally %lu", &n) == 1) break;
  if (!n) { fprintf(stderr, "tally: %s: no `tally N` line\n", argv[a]); return 2; }
  unsigned acc = 0;
  for (unsigned long i = 0; i < n; i++) {
    for (volatile int k = 0; k < 2000; k++) {}  /* the dispatcher's spin: what the report is about */
    heap[i % HEAP_WORDS] = i % 7;
    acc = (acc + (unsigned)(i % 7)) & 0xFFFFFFu;
  }
  printf("%u\n", acc);
  if (stats) printf("heap words: %lu\nsteps: %lu\n", n < HEAP_WORDS ? n : (unsigned long)HEAP_WORDS, 3 * n);
  return 0;
}
"""
OLD_SOURCE = _SOURCE.replace("USAGE", "[-s]").replace("OPTIONS ", "").replace("    JOBS\n    else if", "    else if")
SOURCE = _SOURCE.replace("USAGE", "[--jobs N] [-s]").replace(
    "OPTIONS", '"  --jobs N  worker threads (default 1)\\n"').replace(
    "JOBS", 'else if (!strcmp(argv[a], "--jobs") && a + 1 < argc) a++;')

README = """# tally

A counting runtime: a program's `tally N` line makes it print the sum of i % 7 for i < N.

## Build

```sh
cd src
cc -O2 -o tally tally.c
```

Then `./src/tally [--jobs N] [-s] examples/sum.tl`.
"""

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
| tally | 0.0400 | dev-box | `./src/tally main.tl` |
| C (gcc -O2) | 0.0010 | dev-box | `gcc -O2 t.c && ./a.out` |

## Root cause

`src/tally.c: main` spins an empty loop before each step.

## Fix

None yet.
"""


def create_runtime(path: Path) -> dict[str, str]:
    """Create `tally` at `path` (missing or an empty folder); its commits by name: `v0.1` and `main`."""
    path = Path(path)
    if path.exists() and (not path.is_dir() or any(path.iterdir())):
        raise Invalid(f"{path} already exists and is not an empty folder", "give a new or empty folder")
    repo = git.Repo.init(path, initial_branch=BRANCH)
    try:
        writer = Writer(repo, path)
        old = writer.commit({"README.md": README.replace("[--jobs N] ", ""), "src/tally.c": OLD_SOURCE,
                             ".gitignore": "src/tally\n", "examples/sum.tl": "tally 1000\n",
                             "examples/count.tl": "# counts to a million\ntally 1000000\n"},
                            "tally: a counting runtime")
        repo.create_tag(OLD_TAG, ref=old)
        writer.commit({"README.md": README, "src/tally.c": SOURCE}, "tally: --jobs N")
        main = writer.commit({f"devs/issues/{SLUG}.md": REPORT}, "a report: every step spins")
    finally:
        repo.close()
    return {OLD_TAG: old, BRANCH: main}
