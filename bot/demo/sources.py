"""The demo project's files as data: a tiny C "runtime", its fix, its perfbot settings and its README.

The runtime reads a one-statement program (`sum N`, `xor N`, `sum_mod N K`) and evaluates it the way a naive
interpreter does. On main it boxes every intermediate value of `sum` in a heap node (a malloc and a free
per value) and computes `%` with a 24-step shift-and-subtract loop: two real slowdowns, each in its own
function, so one fix can remove one of them and leave the other measurably slow.
"""
from __future__ import annotations

SUM_N = 5_000_000
XOR_N = 20_000_000
XOR_OUTPUT = "5964800"  # the xor of i*i mod 2^24 for i < XOR_N
SUM_OUTPUT = "4463072"  # the sum of i*i mod 2^24 for i < SUM_N, wrapped to u24
MOD_N, MOD_K = 6_000_000, 7
MOD_OUTPUT = "1222781"

_HEAD = r"""/* The demo runtime: evaluates a one-statement program the way a naive interpreter does. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define U24(x) ((x) & 0xFFFFFFu)  /* values are u24: they wrap mod 2^24 */

/* The evaluator's steps, printed by -s: an add, a box or a remainder step is one. Unlike time, the count is
   the same on every run and every machine, so it can decide a comparison on a busy host. */
static unsigned long steps;
"""

_BOXED_SUM = r"""
typedef struct { unsigned v; } Box;
static Box *volatile sink;  /* the boxes escape, so the compiler keeps every allocation */

static Box *box(unsigned v) {
  Box *b = malloc(sizeof *b);
  if (!b) abort();
  steps++;
  b->v = v;
  sink = b;
  return b;
}

/* sum N: the sum of i*i for i < N. */
static unsigned sum(unsigned long n) {
  Box *acc = box(0);
  for (unsigned long i = 0; i < n; i++) {
    for (unsigned k = 0; k < 4; k++) free(box(acc->v ^ k));  /* the evaluator's operand temporaries */
    Box *next = box(U24(acc->v + U24((unsigned)(i * i))));
    steps++;
    free(acc);
    acc = next;
  }
  unsigned v = acc->v;
  free(acc);
  return v;
}
"""

# The fix keeps the accumulator in a register: nothing in the loop outlives one step, so nothing needs a box.
_UNBOXED_SUM = r"""
/* sum N: the sum of i*i for i < N. */
static unsigned sum(unsigned long n) {
  unsigned acc = 0;
  for (unsigned long i = 0; i < n; i++) acc = U24(acc + U24((unsigned)(i * i)));
  steps += n;
  return acc;
}
"""

_MOD_SHIFT = r"""
/* u24 remainder by shift and subtract: the GPU backends have no integer divide, and share this code. */
#define MOD_STEPS 24
static unsigned u24_mod(unsigned a, unsigned b) {
  unsigned r = 0;
  for (int bit = 23; bit >= 0; bit--) {
    r = (r << 1) | ((a >> bit) & 1);
    if (r >= b) r -= b;
  }
  return r;
}
"""

# `xor N` went through the evaluator's generic bitwise routine, one bit per step, until a commit on main gave the
# C backend its own `^`: the demo's report whose fix is already in main names that commit.
_XOR_BITS = r"""
/* u24 xor bit by bit: the evaluator's generic bitwise routine. */
#define XOR_STEPS 24
static unsigned u24_xor(unsigned a, unsigned b) {
  unsigned r = 0;
  for (int bit = 23; bit >= 0; bit--) r = (r << 1) | (((a >> bit) ^ (b >> bit)) & 1);
  return r;
}
"""

_XOR_HARDWARE = r"""
/* u24 xor: the C backend's own `^`. */
#define XOR_STEPS 1
static unsigned u24_xor(unsigned a, unsigned b) { return U24(a ^ b); }
"""

# runtime v1, the older implementation on branch v1: the C backend's own hardware remainder.
_MOD_HARDWARE = r"""
/* u24 remainder: the C backend's own `%`. */
#define MOD_STEPS 1
static unsigned u24_mod(unsigned a, unsigned b) { return a % b; }
"""

_TAIL = r"""
/* xor N: the xor of i*i for i < N. */
static unsigned xor_all(unsigned long n) {
  unsigned acc = 0;
  for (unsigned long i = 0; i < n; i++) acc = u24_xor(acc, U24((unsigned)(i * i)));
  steps += n * XOR_STEPS;
  return acc;
}

/* sum_mod N K over [lo, hi): the sum of i % K, one thread's share of the range. */
typedef struct { unsigned long lo, hi, k; unsigned acc; } Share;

static void *sum_mod_share(void *arg) {
  Share *s = arg;
  unsigned acc = 0;
  for (unsigned long i = s->lo; i < s->hi; i++) acc = U24(acc + u24_mod(U24((unsigned)i), (unsigned)s->k));
  s->acc = acc;
  return NULL;
}

/* sum_mod N K: the sum of i % K for i < N, split over `threads` (u24 sums add up in any order). */
static unsigned sum_mod(unsigned long n, unsigned k, int threads) {
  Share shares[64];
  pthread_t ids[64];
  unsigned acc = 0;
  for (int t = 0; t < threads; t++) {
    shares[t] = (Share){n * t / threads, n * (t + 1) / threads, k, 0};
    if (threads > 1 && pthread_create(&ids[t], NULL, sum_mod_share, &shares[t]) != 0) abort();
  }
  for (int t = 0; t < threads; t++) {
    if (threads > 1) pthread_join(ids[t], NULL); else sum_mod_share(&shares[t]);
    acc = U24(acc + shares[t].acc);
  }
  steps += n * (1 + MOD_STEPS);  /* an add and a remainder per value, counted after the join: no thread races */
  return acc;
}

static int usage(void) {
  fprintf(stderr, "usage: runtime [-T THREADS] [-s] PROGRAM.dl [N]  (a program is `sum N`, `xor N` or `sum_mod N K`; "
                  "N on the command line overrides the program's; -s prints statistics)\n");
  return 2;
}

int main(int argc, char **argv) {
  int threads = 1, stats = 0, a = 1;
  for (; a < argc && argv[a][0] == '-' && argv[a][1]; a++) {
    if (strcmp(argv[a], "-s") == 0) stats = 1;
    else if (strncmp(argv[a], "-T", 2) == 0) {
      const char *count = argv[a][2] ? argv[a] + 2 : (a + 1 < argc ? argv[++a] : "");
      threads = atoi(count);
      if (threads < 1 || threads > 64) return usage();
    } else return usage();
  }
  if (a >= argc) return usage();
  const char *dot = strrchr(argv[a], '.');
  if (!dot || (strcmp(dot, ".dl") != 0 && strcmp(dot, ".bend") != 0)) {  /* .bend: programs from before .dl */
    fprintf(stderr, "runtime: %s is not a program: programs end in .dl\n", argv[a]);
    return 2;
  }
  FILE *f = fopen(argv[a], "r");
  char line[256], op[32];
  unsigned long n = 0, k = 0;
  int fields = 0;
  while (f && fgets(line, sizeof line, f)) {
    if (line[0] == '#' || line[strspn(line, " \t\r\n")] == '\0') continue;  /* comments, blank lines */
    fields = sscanf(line, "%31s %lu %lu", op, &n, &k);
    break;
  }
  if (a + 1 < argc) n = strtoul(argv[a + 1], NULL, 10);
  if (fields >= 2 && strcmp(op, "sum") == 0) printf("%u\n", sum(n));
  else if (fields >= 2 && strcmp(op, "xor") == 0) printf("%u\n", xor_all(n));
  else if (fields == 3 && strcmp(op, "sum_mod") == 0 && k > 0) printf("%u\n", sum_mod(n, (unsigned)k, threads));
  else return usage();
  /* Statistics as a runtime prints them: the deterministic step count, then the threads used. */
  if (stats) printf("- STEPS: %lu\n- THREADS: %d\n", steps, threads);
  return 0;
}
"""
RUNTIME_MAIN = _HEAD + _BOXED_SUM + _MOD_SHIFT + _XOR_HARDWARE + _TAIL
RUNTIME_FIX = _HEAD + _UNBOXED_SUM + _MOD_SHIFT + _XOR_HARDWARE + _TAIL
RUNTIME_V1 = _HEAD + _BOXED_SUM + _MOD_HARDWARE + _XOR_BITS + _TAIL
RUNTIME_XOR_BITS = _HEAD + _BOXED_SUM + _MOD_SHIFT + _XOR_BITS + _TAIL  # main before the xor fix

# Modest limits: a verification of the fix takes seconds on two cores, a hang at most 5 s. Up to 30 pairs:
# the fixed program runs for milliseconds, and on a busy host more pairs, not luck, settle its interval.
SETTINGS = """# How perfbot builds this project and runs a report's two programs (bot/core/config/).
[build]
command = ["gcc", "-O2", "-o", "runtime", "runtime.c"]

[run]
language = ["./runtime", "{file}"]
c_compile = ["gcc", "-O2", "-o", "{out}", "{file}"]

[verify]
min_samples = 5
max_samples = 30
budget_seconds = 60
timeout_seconds = 5
memory_mb = 512
"""
# The demo's own settings use what a real runtime needs: its file extension, its thread flag, statistics
# lines (-s) that the C translation does not print and that are dropped before outputs are compared, the
# step count captured beside the times, and the factor a report comparing with runtime v1 is held to.
# No runner here: where reports' code runs is the operator's (instance/perfbot.toml); the CLI and local mode
# use this machine, in the sandbox.
# The demo also measures each new report's claim on main (verify on open), so serving it shows both flows.
CONFIG = """# How perfbot builds this project and runs a report's programs (perfbot: docs/verification.md).
[build]
command = ["gcc", "-O2", "-pthread", "-o", "runtime", "runtime.c"]

[run]
program = "main.dl"           # the runtime reads .dl programs
language = ["./runtime", "-T{threads}", "-s", "{file}", "{input}"]
c_compile = ["gcc", "-O2", "-o", "{out}", "{file}"]
output = "normalize"          # -s adds statistics lines; drop them before the outputs are compared
normalize = [["(?m)^- [A-Z]+: .*$", ""]]
metrics = {steps = "- STEPS: ([0-9]+)"}

[verify]
on_open = true                # measure each new report's claim on main
min_samples = 5
max_samples = 30
budget_seconds = 60
timeout_seconds = 5
memory_mb = 512
reference_factor = 1.1        # `reference: runtime@v1` reports: within 1.1x of runtime v1, or slower

[new]                         # what `perfbot new` starts a report from: a program this runtime runs
program = '''
# the sum of i*i for i < 1000, u24 (wraps mod 2^24)
sum 1000
'''
translation = '''
#include <stdio.h>
#include <stdint.h>

#define U24(x) ((x) & 0xFFFFFFu)   /* u24 wraps mod 2^24 */

int main(void) {
  uint32_t acc = 0;
  for (unsigned long i = 0; i < 1000; i++) acc = U24(acc + U24((uint32_t)(i * i)));
  printf("%u\\n", acc);
  return 0;
}
'''
prints = "14066396"
"""

GITIGNORE = "/runtime\n.perfbot-run/\n"

README = """# perfbot demo project

A self-contained stand-in for a language runtime's repository, made by `perfbot demo`.

- `runtime.c`: the "runtime". It runs a one-statement program: `sum N` (the sum of i*i for i < N), `xor N`
  (their xor) or `sum_mod N K` (the sum of i % K for i < N), u24 arithmetic. Build it with
  `gcc -O2 -pthread -o runtime runtime.c`, run it with `./runtime [-T THREADS] [-s] main.dl [N]`
  (`-s` adds `- STEPS:` statistics lines, N overrides the program's size).
- `.perfbot.toml`: how perfbot builds the runtime and runs a report's program and C translation. Where it
  runs (runners, the sandbox) is not the repository's to say: that is perfbot's own `instance/perfbot.toml`.
- `devs/issues/`: performance reports, one file each (`perf_<slug>.md`).
- branch `{fix_branch}`: the fix `{fixed_slug}` names in its `fix:` field.
- `{merged_slug}`: fixed by a commit already merged into main, which its `fix:` names; perfbot measures
  that commit against its parent and calls the report fixed in main.
- branch `{reference_branch}`: runtime v1, the older implementation (hardware `%`) that `{reference_slug}`
  compares against with `reference: runtime@{reference_branch}`.

Try:

    perfbot verify {fixed_slug} --repo .                 # the fix against main: fixed
    perfbot verify {fixed_slug} --repo . --head main     # main alone: the claim is reproduced
    perfbot verify {open_slug} --repo .        # no fix yet: reproduced
    perfbot verify {merged_slug} --repo .        # the fix in main against its parent: fixed in main
    perfbot verify {reference_slug} --repo .    # main against runtime v1, two input sizes: slower
    perfbot serve --repo .                                 # records and local issues for these reports
"""
