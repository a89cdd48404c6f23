"""The demo's performance reports: one with a fix branch that really works, one whose fix is still unknown, one
whose fix is a commit already merged into main, and one that compares with runtime v1.

Each report's program runs on the demo runtime and its C translation prints the same number, so
`perfbot verify` can time both. The measured times are from a 2-core x86-64 Linux box, best of 5.
"""
from __future__ import annotations

from bot.demo.sources import MOD_K, MOD_N, MOD_OUTPUT, SUM_N, SUM_OUTPUT, XOR_N, XOR_OUTPUT

FIXED_SLUG = "perf_boxed_sum"
FIX_BRANCH = "fix/perf_boxed_sum-unbox"
OPEN_SLUG = "perf_mod_shift_subtract"
REFERENCE_SLUG = "perf_mod_slower_than_v1"
REFERENCE_BRANCH = "v1"
REFERENCE_INPUTS = (2_000_000, MOD_N)
MERGED_SLUG = "perf_xor_bit_by_bit"  # its fix is a commit on main: "fixed in main since ..."

SUM_TRANSLATION = f"""#include <stdio.h>
#include <stdint.h>

#define U24(x) ((x) & 0xFFFFFFu)   /* u24 wraps mod 2^24 */

int main(void) {{
  uint32_t acc = 0;
  for (unsigned long i = 0; i < {SUM_N}; i++) acc = U24(acc + U24((uint32_t)(i * i)));
  printf("%u\\n", acc);
  printf("- STEPS: {SUM_N}\\n");  /* the runtime's -s count for the same work: one add per value */
  return 0;
}}"""

MOD_TRANSLATION = f"""#include <stdio.h>
#include <stdint.h>

#define U24(x) ((x) & 0xFFFFFFu)   /* u24 wraps mod 2^24 */

int main(void) {{
  uint32_t acc = 0;
  for (unsigned long i = 0; i < {MOD_N}; i++) acc = U24(acc + U24((uint32_t)i) % {MOD_K});
  printf("%u\\n", acc);
  printf("- STEPS: {2 * MOD_N}\\n");  /* the runtime's -s count for the same work: an add and a remainder per value */
  return 0;
}}"""


def boxed_sum_report(language_seconds: float = 0.248, c_seconds: float = 0.0039, fix: str = FIX_BRANCH) -> str:
    """The report the fix branch fixes; tests pass other times and branch names to make variants of it."""
    ratio = round(language_seconds / c_seconds, 1)
    return f"""---
track: seq
backend: c
threads: 1
ratio: {ratio:g}
fix: {fix}
---
# Every step of a sum boxes its value

## Context

Summing squares, the smallest numeric loop there is, runs {ratio:g}x slower than its C translation. Every
numeric kernel accumulates this way, so the overhead sits under most other seq reports.

## Reproduction

```bend
# the sum of i*i for i < {SUM_N}, u24 (wraps mod 2^24)
sum {SUM_N}
```

```c
{SUM_TRANSLATION}
```

Both print `{SUM_OUTPUT}`.

## Measurements

| implementation | time (s) | machine | command |
| --- | --- | --- | --- |
| bend (demo runtime) | {language_seconds:.3f} | dev-box | `./runtime sum.bend` |
| C (gcc -O2) | {c_seconds:.4f} | dev-box | `gcc -O2 sum.c && ./a.out` |

dev-box: 2-core x86-64 Linux, best of 5.

## Root cause

`runtime.c: sum` keeps the accumulator in a heap box and boxes the evaluator's four operand temporaries
too: five malloc/free pairs per iteration, where C keeps `acc` in a register.

## Fix

Branch `{fix}`: the accumulator stays an unboxed `unsigned` local, since no value outlives one step.
With the fix the program takes 0.0041 s (1.1x C).
"""


def mod_report() -> str:
    return f"""---
track: seq
backend: c
threads: 1
ratio: 15.3
fix: unknown
---
# `%` runs a 24-step shift-and-subtract loop

## Context

Any program that takes a remainder pays for it: a sum of `i % {MOD_K}` is 15.3x slower than C. Hashing,
modular arithmetic and cyclic indexing all use `%` in their inner loops.

## Reproduction

```bend
# the sum of i % {MOD_K} for i < {MOD_N}, u24 (wraps mod 2^24)
sum_mod {MOD_N} {MOD_K}
```

```c
{MOD_TRANSLATION}
```

Both print `{MOD_OUTPUT}`.

## Measurements

| implementation | time (s) | machine | command |
| --- | --- | --- | --- |
| bend (demo runtime) | 0.119 | dev-box | `./runtime mod.bend` |
| C (gcc -O2) | 0.0078 | dev-box | `gcc -O2 mod.c && ./a.out` |

dev-box: 2-core x86-64 Linux, best of 5.

## Root cause

`runtime.c: u24_mod` computes every remainder bit by bit, 24 dependent shift-compare-subtract steps,
because the GPU backends have no integer divide and share the routine. gcc turns `% {MOD_K}` into a
multiply and a shift.

## Fix

Unknown. A per-backend operator table would let the C backend use the hardware `%`; it needs a design,
since the backends share one evaluator.
"""


XOR_TRANSLATION = f"""#include <stdio.h>
#include <stdint.h>

#define U24(x) ((x) & 0xFFFFFFu)   /* u24 wraps mod 2^24 */

int main(void) {{
  uint32_t acc = 0;
  for (unsigned long i = 0; i < {XOR_N}; i++) acc = acc ^ U24((uint32_t)(i * i));
  printf("%u\\n", acc);
  printf("- STEPS: {XOR_N}\\n");  /* the runtime's -s count for the same work: one xor per value */
  return 0;
}}"""


def xor_report(fix: str = "unknown") -> str:
    """The report whose fix went into main: filed with `fix: unknown`, then given the fix commit's sha."""
    where = (f"Commit `{fix}` (on main): `u24_xor` is the C backend's `^`; the program now takes 0.03 s (1x C)."
             if fix != "unknown" else "Unknown yet: the bitwise routine is shared by and, or and xor.")
    return f"""---
track: seq
backend: c
threads: 1
ratio: 15.7
fix: {fix}
---
# `xor` runs bit by bit

## Context

The xor of a range of squares is 15.7x slower than its C translation. Hashes and checksums xor in their inner
loops.

## Reproduction

```bend
# the xor of i*i for i < {XOR_N}, u24 (wraps mod 2^24)
xor {XOR_N}
```

```c
{XOR_TRANSLATION}
```

Both print `{XOR_OUTPUT}`.

## Measurements

| implementation | time (s) | machine | command |
| --- | --- | --- | --- |
| bend (demo runtime) | 0.470 | dev-box | `./runtime xor.bend` |
| C (gcc -O2) | 0.030 | dev-box | `gcc -O2 xor.c && ./a.out` |

dev-box: 2-core x86-64 Linux, best of 5.

## Root cause

`runtime.c: u24_xor` goes through the evaluator's generic bitwise routine, 24 dependent steps a value, where
gcc emits one `xor`.

## Fix

{where}
"""


def reference_report() -> str:
    """The report that compares with an older implementation of the runtime, not with C, at two sizes."""
    return f"""---
track: seq
backend: c
threads: 1
ratio: 12.4
fix: unknown
reference: runtime@{REFERENCE_BRANCH}
inputs: [{REFERENCE_INPUTS[0]}, {REFERENCE_INPUTS[1]}]
---
# `sum_mod` is 12.4x slower than in runtime v1

## Context

Runtime v1 (branch `{REFERENCE_BRANCH}`) ran remainders at hardware speed; since the C backend shares the
GPU backends' remainder routine, the same program takes 12.4x as long on main, at every size we tried.
The comparison is with the earlier implementation of the same language, not with C: it runs the very same
program file, so no translation is needed.

## Reproduction

```bend
# the sum of i % {MOD_K} for i < N, u24 (wraps mod 2^24); N comes from the command line
sum_mod {MOD_N} {MOD_K}
```

Run with `./runtime -T1 -s main.dl N` for N = {REFERENCE_INPUTS[0]} and {REFERENCE_INPUTS[1]}: both
runtimes print the same sums (`{MOD_OUTPUT}` for {MOD_N}); v1's `- STEPS:` count is 2 per value, main's 25.

## Measurements

| implementation | time (s) | machine | command |
| --- | --- | --- | --- |
| bend (demo runtime, main) | 0.119 | dev-box | `./runtime -T1 -s main.dl {MOD_N}` |
| bend (runtime v1) | 0.0096 | dev-box | `git checkout {REFERENCE_BRANCH} && ./runtime -T1 -s main.dl {MOD_N}` |

dev-box: 2-core x86-64 Linux, best of 5.

## Root cause

`runtime.c: u24_mod` became a 24-step shift-and-subtract loop when the backends started sharing it;
v1 used the C backend's `%`.

## Fix

Unknown: the same design question as `perf_mod_shift_subtract`.
"""


REPORTS = {FIXED_SLUG: boxed_sum_report, OPEN_SLUG: mod_report, REFERENCE_SLUG: reference_report,
           MERGED_SLUG: xor_report}
