"""A stand-in GPU runtime in a git repository (this machine has no GPU): the same program runs on N CPU
threads (`--threads N`), "on the GPU" (`--gpu`), or where the runtime itself chooses (`--auto`).

`work N` is N units of work. On the CPU, N POSIX threads each compute their share of the printed checksum and
count N/threads units; "the GPU" computes the whole checksum in one kernel launch counted as N * GPU_PERCENT / 100
units; `--auto` picks the GPU when AUTO_PICKS_GPU, else one CPU thread. The runtime prints its span (the longest
thread's or the kernel's units), which is what is measured (metric:span), so speedups are the program's and not
how many of this machine's cores are free. On `main` the GPU path is twice as slow as one CPU thread;
`fix/metal-kernel` makes it four times faster than one thread (auto still picks the CPU); `fix/auto-choice` also
makes auto pick the GPU.
"""
from __future__ import annotations

from pathlib import Path

from tests.bench_project import CONFIG
from tests.gitrepo import RepoBuilder

GPU_RUNTIME = r"""
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifndef GPU_PERCENT
#define GPU_PERCENT 200
#endif
#ifndef AUTO_PICKS_GPU
#define AUTO_PICKS_GPU 0
#endif
typedef struct { pthread_t id; int index, threads; unsigned long work, sum, span; } Part;

static unsigned long share(int index, int parts) {
  unsigned long h = 0;
  for (int i = index; i < 4096; i += parts) h += ((unsigned long)i * 2654435761ul) >> 7;
  return h;
}

static void *cpu(void *arg) {
  Part *p = arg;
  p->sum = share(p->index, p->threads);
  p->span = (p->work + p->threads - 1) / p->threads;
  return NULL;
}

int main(int argc, char **argv) {
  int threads = 1, gpu = 0, autopick = 0;
  for (int a = 2; a < argc; a++) {
    if (!strcmp(argv[a], "--threads") && a + 1 < argc) threads = atoi(argv[++a]);
    else if (!strcmp(argv[a], "--gpu")) gpu = 1;
    else if (!strcmp(argv[a], "--auto")) autopick = 1;
  }
  unsigned long work = 0;
  FILE *f = argc > 1 ? fopen(argv[1], "r") : NULL;
  if (!f || fscanf(f, "work %lu", &work) != 1 || threads < 1 || threads > 64) {
    fprintf(stderr, "usage: runtime PROGRAM [--threads N | --gpu | --auto]; PROGRAM is `work N`\n");
    return 2;
  }
  if (autopick) { gpu = AUTO_PICKS_GPU; threads = 1; }
  unsigned long total = 0, span = 0;
  if (gpu) {
    total = share(0, 1);
    span = work * GPU_PERCENT / 100;
  } else {
    Part parts[64] = {0};
    for (int t = 0; t < threads; t++) {
      parts[t] = (Part){0, t, threads, work, 0, 0};
      if (pthread_create(&parts[t].id, NULL, cpu, &parts[t])) { perror("pthread_create"); return 3; }
    }
    for (int t = 0; t < threads; t++) {
      pthread_join(parts[t].id, NULL); total += parts[t].sum;
      if (parts[t].span > span) span = parts[t].span;
    }
  }
  printf("checksum %lu\n- SPAN: %lu\n", total, span);
  return 0;
}
"""
GPU_CONFIG = CONFIG.replace('command = ["gcc", "-O2", "-o", "runtime", "runtime.c"]',
                            'command = ["gcc", "-O2", "-pthread", "-o", "runtime", "runtime.c"]') \
    .replace('language = ["./runtime", "-s", "{file}"]',
             'language = ["./runtime", "{file}", "--threads", "{threads}"]') \
    + """threads = [1, 2]

[gpu]
run = ["./runtime", "{file}", "--gpu"]
auto = ["./runtime", "{file}", "--auto"]
auto_tolerance = 0.25
"""
# The operator's instance file: the runner labelled metal (runners are never the repository's to name).
GPU_RUNNERS = """\
[[runners]]
name = "mini-metal"
kind = "local"
labels = ["metal"]
"""
assert "-pthread" in GPU_CONFIG and "{threads}" in GPU_CONFIG, "the demo settings changed: update GPU_CONFIG"
PROGRAM = "work 100"


def gpu_report(title: str, ratio: float, *, mode: str | None = None, gpu_seconds: float = 0.2) -> str:
    mode_line = f"mode: {mode}\n" if mode else ""
    return f"""---
track: par
backend: metal
threads: 1024
ratio: {ratio}
{mode_line}---
# {title}

## Context

The kernel runs on the M2's GPU with 1024 threads.

## Reproduction

```bend
{PROGRAM}
```

```c
#include <stdio.h>
int main(void) {{ return 0; }}
```

## Measurements

| implementation | backend | threads | time (s) |
| --- | --- | ---: | ---: |
| bend | c | 1 | 0.100 |
| bend | metal | 1024 | {gpu_seconds} |

## Root cause

unknown

## Fix

unknown
"""


REPORTS = {
    "perf_metal_slower_than_cpu": gpu_report("The Metal kernel is slower than one CPU thread", 2.0),
    "perf_metal_auto_picks_cpu": gpu_report("Auto mode keeps a GPU-friendly program on the CPU", 10.0,
                                            mode="auto", gpu_seconds=0.01),
}


def build_gpu_project(root: Path) -> tuple[RepoBuilder, dict[str, str]]:
    repo = RepoBuilder(root, branch="main")
    repo.write("runtime.c", GPU_RUNTIME).write(".perfbot.toml", GPU_CONFIG)
    for slug, text in REPORTS.items():
        repo.write(f"devs/issues/{slug}.md", text)
    heads = {"main": repo.commit("a runtime with a CPU and a (stand-in) GPU path")}
    for branch, defines in (("fix/metal-kernel", "#define GPU_PERCENT 25\n"),
                            ("fix/auto-choice", "#define GPU_PERCENT 25\n#define AUTO_PICKS_GPU 1\n")):
        repo.repo.git.checkout("-q", "-b", branch, heads["main"])
        heads[branch] = repo.write("runtime.c", defines + GPU_RUNTIME).commit(f"runtime: {branch}")
    repo.repo.git.checkout("-q", "main")
    return repo, heads
