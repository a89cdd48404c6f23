"""A real pthreads runtime for scaling sweeps, in a git repository: `items C1 C2 ...` is a list of work
items of C units each, split over `--threads N` POSIX threads, with a balanced and an irregular workload
reported against it.

Each item computes its share of the printed checksum (so every thread count must print the same number), and
each thread counts the units it did: the runtime prints its span, the longest thread's count, which is what the
sweep measures (metric:span), so the speedup is the program's scheduling and never how many of this machine's
cores other jobs leave free. On `main` the items are split in static blocks (thread t takes items t*n/T ..
(t+1)*n/T), so when a few items hold most of the work, one thread does most of it; the branch
`fix/dynamic-items` hands each item, in order, to the thread with the least work so far (what a shared queue
does when an item takes as long as its cost, decided before the threads start so the span is the same on every
run).
"""
from __future__ import annotations

from pathlib import Path

from tests.bench_project import CONFIG
from tests.gitrepo import RepoBuilder

SWEEP_RUNTIME = r"""
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#define MAX_ITEMS 256
#define MAX_THREADS 64
static unsigned long cost[MAX_ITEMS];
static int items, owner[MAX_ITEMS];
typedef struct { pthread_t id; int index; unsigned long sum, span; } Worker;

static void work(int i, Worker *w) {
  unsigned long h = (unsigned long)i * 2654435761ul;
  for (int k = 0; k < 20000; k++) h = h * 6364136223846793005ul + 1442695040888963407ul;
  w->sum += h >> 40;
  w->span += cost[i];
}

static void *run(void *arg) {
  Worker *w = arg;
  for (int i = 0; i < items; i++) if (owner[i] == w->index) work(i, w);
  return NULL;
}

static void hand_out(int threads) {
#ifdef DYNAMIC
  unsigned long load[MAX_THREADS] = {0};
  for (int i = 0; i < items; i++) {
    int least = 0;
    for (int t = 1; t < threads; t++) if (load[t] < load[least]) least = t;
    owner[i] = least; load[least] += cost[i];
  }
#else
  for (int t = 0; t < threads; t++)
    for (int i = t * items / threads; i < (t + 1) * items / threads; i++) owner[i] = t;
#endif
}

int main(int argc, char **argv) {
  int threads = 1;
  for (int a = 2; a + 1 < argc; a++) if (!strcmp(argv[a], "--threads")) threads = atoi(argv[a + 1]);
  char word[16];
  FILE *f = argc > 1 ? fopen(argv[1], "r") : NULL;
  if (!f || fscanf(f, "%15s", word) != 1 || strcmp(word, "items") || threads < 1 || threads > MAX_THREADS) {
    fprintf(stderr, "usage: runtime PROGRAM --threads N (1..%d); PROGRAM is `items COST COST ...`\n", MAX_THREADS);
    return 2;
  }
  while (items < MAX_ITEMS && fscanf(f, "%lu", &cost[items]) == 1) items++;
  hand_out(threads);
  Worker workers[MAX_THREADS] = {0};
  for (int t = 0; t < threads; t++) {
    workers[t].index = t;
    if (pthread_create(&workers[t].id, NULL, run, &workers[t])) { perror("pthread_create"); return 3; }
  }
  unsigned long total = 0, span = 0;
  for (int t = 0; t < threads; t++) {
    pthread_join(workers[t].id, NULL); total += workers[t].sum;
    if (workers[t].span > span) span = workers[t].span;
  }
  printf("checksum %lu of %d items\n- SPAN: %lu\n", total, items, span);
  return 0;
}
"""
SWEEP_CONFIG = CONFIG.replace('command = ["gcc", "-O2", "-o", "runtime", "runtime.c"]',
                              'command = ["gcc", "-O2", "-pthread", "-o", "runtime", "runtime.c"]') \
    .replace('language = ["./runtime", "-s", "{file}"]',
             'language = ["./runtime", "{file}", "--threads", "{threads}"]') \
    + "threads = [1, 2, 4]\n"
assert "-pthread" in SWEEP_CONFIG and "{threads}" in SWEEP_CONFIG, "the demo settings changed: update SWEEP_CONFIG"

# 200 units of work either way: eight equal items, or four heavy items first and eight light ones after them
# (in static blocks of two threads, thread 0 gets 170 of the 200 units).
BALANCED = "items " + " ".join(["25"] * 8)
IRREGULAR = "items " + " ".join(["40"] * 4 + ["5"] * 8)


def sweep_report(slug_words: str, program: str, threads: int = 2, fix: str | None = None) -> str:
    fix_line = f"fix: {fix}\n" if fix else ""
    return f"""---
track: par
backend: c
threads: {threads}
ratio: 2.0
{fix_line}---
# {slug_words} do not spread over threads

## Context

The runtime's items run on {threads} threads.

## Reproduction

```bend
{program}
```

```c
#include <stdio.h>
int main(void) {{ return 0; }}
```

## Measurements

| implementation | threads | time (s) | machine | command |
| --- | ---: | --- | --- | --- |
| bend | 1 | 0.200 | ci | `./runtime program.bend --threads 1` |
| bend | {threads} | 0.200 | ci | `./runtime program.bend --threads {threads}` |

## Root cause

unknown

## Fix

unknown
"""


REPORTS = {"perf_balanced_items": sweep_report("Balanced items", BALANCED),
           "perf_irregular_items": sweep_report("Irregular items", IRREGULAR, fix="fix/dynamic-items")}


def build_sweep_project(root: Path) -> tuple[RepoBuilder, dict[str, str]]:
    repo = RepoBuilder(root, branch="main")
    repo.write("runtime.c", SWEEP_RUNTIME).write(".perfbot.toml", SWEEP_CONFIG)
    for slug, text in REPORTS.items():
        repo.write(f"devs/issues/{slug}.md", text)
    main = repo.commit("a pthreads runtime: items in static blocks; two workloads")
    repo.repo.git.checkout("-q", "-b", "fix/dynamic-items", main)
    fix = repo.write("runtime.c", "#define DYNAMIC 1\n" + SWEEP_RUNTIME).commit("runtime: hand items out one by one")
    repo.repo.git.checkout("-q", "main")
    return repo, {"main": main, "fix/dynamic-items": fix}
