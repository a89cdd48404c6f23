"""Two runtimes that are not the demo, in real git repositories, for `perfbot init` and `perfbot check`.

`tally` (one C file; docs/adopt.md's tally is bot/demo/runtime.py's): `./tally [--jobs N] PROGRAM.tl [N]` reads
`tally N` and prints the u24 sum of i % 7 for i < N, then statistics lines (`heap words:`, `steps:`) on every
run. Its heap size is a define the build must pass, renamed HEAP_CELLS -> HEAP_WORDS after the commit `old`;
main is slow (an inner loop per step), branch fix/perf_slow_tally is not.

`calc` (a Makefile building bin/calc): `bin/calc run [--threads N] FILE.calc` reads `add N`.

Each fences its reports' programs with its own tag (```tally, ```calc), which its `.perfbot.toml` declares.
"""
from __future__ import annotations

from pathlib import Path

from bot.demo.runtime import OUTPUT, TRANSLATION  # the walkthrough's tally program and its C twin
from bot.demo.runtime import REPORT as DEMO_REPORT
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
# The demo runtime's report, for this one-folder tally (no src/) and with its fix on a branch.
REPORT = (DEMO_REPORT.replace("ratio: 40\n---", "ratio: 40\nfix: fix/perf_slow_tally\n---")
          .replace("./src/tally", "./tally").replace("`src/tally.c: main`", "`tally.c: main`")
          .replace("## Fix\n\nNone yet.", "## Fix\n\nBranch `fix/perf_slow_tally` drops the loop."))


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


# Runtimes `perfbot init` adopts from scratch (tests/adopt/test_adopt_runtimes.py). Each reads `add N` and prints
# the sum of i for i < N; its report fences its program with the runtime's own tag.
SUM_C = '#include <stdio.h>\nint main(void) {\n  unsigned long acc = 0;\n  for (unsigned long i = 0; i < 1000; i++) ' \
        'acc += i;\n  printf("%lu\\n", acc);\n  return 0;\n}'


def sum_report(tag: str, program: str = "add 1000") -> str:
    return CALC_REPORT.replace("```calc\nadd 1000", f"```{tag}\n{program}").replace(
        "fix: unknown\n", "").replace(
        "Branch `unknown` drops the loop.", "None yet.")


def build_in_subfolder(root: Path) -> RepoBuilder:
    """calc as before, but its Makefile and sources live in `runtime/`, and there is no README."""
    repo = RepoBuilder(root, branch="main")
    repo.write("runtime/src/calc.c", CALC).write("runtime/Makefile", MAKEFILE)
    repo.write("devs/issues/perf_slow_add.md", sum_report("calc")).commit("calc in runtime/, and a report")
    return repo


EVAL = r"""
#include <stdio.h>
unsigned long eval(FILE *f) {
  unsigned long n = 0, acc = 0;
  if (fscanf(f, "add %lu", &n) != 1) return (unsigned long)-1;
  for (unsigned long i = 0; i < n; i++) acc += i;
  return acc;
}
"""
ADDER = r"""
#include <stdio.h>
#include <string.h>
unsigned long eval(FILE *f);
int main(int argc, char **argv) {
  if (argc > 1 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
    puts("usage: adder [--workers N] FILE.add\n  --workers N  threads to run on");
    return 0;
  }
  int a = 1;
  if (a + 1 < argc && !strcmp(argv[a], "--workers")) a += 2;
  FILE *f = a < argc ? fopen(argv[a], "r") : NULL;
  if (!f) { fputs("usage: adder [--workers N] FILE.add\n", stderr); return 2; }
  printf("%lu\n", eval(f));
  return 0;
}
"""
ADDER_README = """# adder

Two C files and no build system: the README says how.

## Building

```
$ git clone https://example.invalid/adder
$ cd adder
$ cd clang && gcc -O2 -o adder main.c eval.c
```
"""


def build_readme_only(root: Path) -> RepoBuilder:
    """adder: two C files in `clang/` (no single file, no Makefile), built by the line in its README."""
    repo = RepoBuilder(root, branch="main")
    repo.write("clang/main.c", ADDER).write("clang/eval.c", EVAL).write("README.md", ADDER_README)
    repo.write("devs/issues/perf_slow_add.md", sum_report("adder")).commit("adder, and a report")
    return repo


STACK = r"""
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
int main(int argc, char **argv) {
  int a = 1;
  for (; a < argc && argv[a][0] == '-'; a++) {
    if (!strcmp(argv[a], "--help")) { puts("usage: stack OPTIONS PROGRAM.st"); return 0; }
    THREADS
    else { fprintf(stderr, "Unknown option: %s\n", argv[a]); return 2; }
  }
  FILE *f = a < argc ? fopen(argv[a], "r") : NULL;
  char word[32];
  unsigned long n = 0, acc = 0;
  if (!f || fscanf(f, "%31s %lu", word, &n) != 2) { fputs("stack: cannot read the program\n", stderr); return 2; }
  if (strcmp(word, "add") SYNTAX) { fprintf(stderr, "stack: parse error: unexpected token `%s`\n", word); return 3; }
  for (unsigned long i = 0; i < n; i++) acc += i;
  printf("%lu\n", acc);
  return 0;
}
"""
STACK_OLD = STACK.replace("OPTIONS", "[-v]").replace("    THREADS\n", "    if (!strcmp(argv[a], \"-v\")) {}\n") \
    .replace(" SYNTAX", "")
STACK_NEW = STACK.replace("OPTIONS", "[-T N] [-v]").replace(
    "THREADS", 'if (!strcmp(argv[a], "-T") && a + 1 < argc) a++;\n    else if (!strcmp(argv[a], "-v")) {}').replace(
    "SYNTAX", '&& strcmp(word, "sum")')


def build_flags_across_commits(root: Path) -> tuple[RepoBuilder, str]:
    """stack: `-T N` exists only since the commit after `old`, and so does the `sum N` syntax one of its two
    reports uses (at `old` that program is newer than the runtime: a parse error, not a configuration one)."""
    repo = RepoBuilder(root, branch="main")
    old = repo.write("stack.c", STACK_OLD).commit("stack")
    repo.write("stack.c", STACK_NEW).commit("stack: -T N, and `sum N`")
    repo.write("devs/issues/perf_slow_add.md", sum_report("stack"))
    repo.write("devs/issues/perf_slow_sum.md", sum_report("stack", "sum 1000")).commit("two reports")
    return repo, old


RESERVING = r"""
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#ifndef HEAP_BYTES
#define HEAP_BYTES (1ULL << 40)  /* a terabyte of address space, reserved at start */
#endif
int main(int argc, char **argv) {
  if (argc < 2 || !strcmp(argv[1], "--help")) { puts("usage: big PROGRAM.big"); return argc < 2 ? 2 : 0; }
  void *heap = mmap(NULL, HEAP_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (heap == MAP_FAILED) {
    fprintf(stderr, "big: cannot reserve %llu bytes for the heap: %s\n", (unsigned long long)HEAP_BYTES,
            strerror(errno));
    return 1;
  }
#ifdef TOUCH
  memset(heap, 1, HEAP_BYTES);  /* used, not only reserved */
#endif
  FILE *f = fopen(argv[1], "r");
  unsigned long n = 0, acc = 0;
  if (!f || fscanf(f, "add %lu", &n) != 1) return 2;
  for (unsigned long i = 0; i < n; i++) acc += i;
  printf("%lu\n", acc);
  return 0;
}
"""


def build_reserving(root: Path) -> tuple[RepoBuilder, str]:
    """big: reserves 1 TiB of heap at start (more than any test host has), sized by HEAP_BYTES under #ifndef;
    called HEAP_CELLS at the commit `old` it returns."""
    repo = RepoBuilder(root, branch="main")
    old = repo.write("big.c", RESERVING.replace("HEAP_BYTES", "HEAP_CELLS")).commit("big")
    repo.write("big.c", RESERVING).write("devs/issues/perf_slow_add.md", sum_report("big")).commit("big: HEAP_BYTES")
    return repo, old


HVM = r"""
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#ifndef HEAP
#define HEAP (1ULL << 35)  /* 32 GiB reserved at start */
#endif
int main(int argc, char **argv) {
  int a = 1;
  for (; a < argc && argv[a][0] == '-'; a++) {
    if (!strcmp(argv[a], "--help")) { puts("usage: hvm OPTIONS FILE.hvm"); return 0; }
    THREADS
    else { fprintf(stderr, "Unknown option: %s\n", argv[a]); return 2; }
  }
  void *heap = mmap(NULL, HEAP, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (heap == MAP_FAILED) {
    fprintf(stderr, "hvm: cannot reserve %llu bytes: %s\n", (unsigned long long)HEAP, strerror(errno));
    return 1;
  }
  FILE *f = a < argc ? fopen(argv[a], "r") : NULL;
  unsigned long n = 0, acc = 0;
  if (!f || fscanf(f, "add %lu", &n) != 1) { fputs("hvm: parse error\n", stderr); return 3; }
  for (unsigned long i = 0; i < n; i++) acc += i;
  printf("%lu\n", acc);
  return 0;
}
"""


def _hvm(define: str, glued_threads: bool) -> str:
    threads = '    if (!strncmp(argv[a], "-T", 2)) {}\n' if glued_threads else ""
    return HVM.replace("HEAP", define).replace("OPTIONS", "[-TN]" if glued_threads else "").replace(
        "    THREADS\n", threads)


def build_as_the_issue_found_it(root: Path) -> tuple[RepoBuilder, str, str]:
    """The runtime issue #41 was filed from: one C file under `clang/`, its build line in its README, a thread
    option glued to its count (`-T1`) only the newest commit takes, and a 32 GiB heap whose define was renamed
    twice (HEAP_WORDS, then HEAP_CELLS, then HEAP_SIZE). Returns the two older commits."""
    repo = RepoBuilder(root, branch="main")
    first = repo.write("clang/hvm.c", _hvm("HEAP_WORDS", False)).write(
        "README.md", "# hvm\n\n```\ncd clang && gcc -O2 -o hvm hvm.c\n```\n").commit("hvm")
    second = repo.write("clang/hvm.c", _hvm("HEAP_CELLS", False)).commit("hvm: HEAP_CELLS")
    repo.write("clang/hvm.c", _hvm("HEAP_SIZE", True)).commit("hvm: -TN, HEAP_SIZE")
    repo.write("devs/issues/perf_slow_add.md", sum_report("hvm")).commit("a report")
    return repo, first, second
