"""Report texts for tests: a canonical report that lints clean, with every fact overridable."""
from __future__ import annotations

LANGUAGE_PROGRAM = """\
def sum(d, acc):
  if d == 0:
    return acc
  else:
    (a, b) = (sum(d - 1, acc * 2), sum(d - 1, acc * 2 + 1))
    return a + b
def main():
  return sum(20, 0)"""

C_PROGRAM = """\
#include <stdint.h>
#include <stdio.h>
static uint64_t sum(int d, uint64_t acc) {
  if (d == 0) return acc;
  return sum(d - 1, acc * 2) + sum(d - 1, acc * 2 + 1);
}
int main(void) { printf("%llu\\n", (unsigned long long)sum(20, 0)); return 0; }"""

_CUDA_PROGRAM = """\
__global__ void sum_kernel(unsigned long long *out) { /* one thread per subtree */ }"""

_MACHINE = {"c": "Ryzen 9 7950X", "cuda": "RTX 4090", "metal": "Apple M2 Max"}


def canonical_report(
    slug: str = "perf_example",
    *,
    track: str = "seq",
    backend: str = "c",
    threads: int = 1,
    ratio: float = 3.4,
    fix: str = "unknown",
    supersedes: tuple[str, ...] = (),
    title: str | None = None,
    root_cause: str = "The compiler copies the scrutinee of every nested match instead of sharing it.",
    fix_text: str | None = None,
    extra_prose: str = "",
) -> str:
    """A report in the canonical format; its table agrees with `ratio`, so it lints clean as given.

    `title` defaults to one naming the slug (distinct reports get distinct content hashes);
    `fix_text` defaults to a pointer at `fix`, or "unknown".
    """
    title = title if title is not None else f"Nested matches copy the scrutinee ({slug})"
    if fix_text is None:
        fix_text = "unknown" if fix == "unknown" else f"See `{fix}`: share the scrutinee instead of copying it."
    machine = _MACHINE.get(backend, _MACHINE["c"])
    context = ("Summing a complete binary tree of depth 20 with nested matches is far slower than the "
               "1-to-1 C translation. Every tree walk in the standard library hits this path.")
    if extra_prose:
        context = f"{context}\n\n{extra_prose}"
    extra_block = ""
    if track == "par" and backend in ("cuda", "metal"):
        extra_block = f"\n```{backend}\n{_CUDA_PROGRAM if backend == 'cuda' else '// metal kernel'}\n```\n"
    return f"""---
track: {track}
backend: {backend}
threads: {threads}
ratio: {ratio}
fix: {fix}
supersedes: [{", ".join(supersedes)}]
---
# {title}

## Context

{context}

## Reproduction

```bend
{LANGUAGE_PROGRAM}
```

```c
{C_PROGRAM}
```
{extra_block}
## Measurements

{_measurements(track, backend, threads, ratio, machine)}

## Root cause

{root_cause}

## Fix

{fix_text}
"""


def _measurements(track: str, backend: str, threads: int, ratio: float, machine: str) -> str:
    """A table whose numbers give back `ratio` (seq: language/C time; par: threads / speedup)."""
    if track == "par":
        one_thread = 8.0
        many = one_thread * ratio / max(threads, 2)
        return "\n".join((
            "| implementation | time | threads | machine | command |",
            "| --- | --- | --- | --- | --- |",
            f"| bend | {one_thread:.4f} s | 1 | {machine} | `bend run-{backend} sum.bend -t 1` |",
            f"| bend | {many:.4f} s | {threads} | {machine} | `bend run-{backend} sum.bend -t {threads}` |",
        ))
    c_time = 0.5
    return "\n".join((
        "| implementation | time | machine | command |",
        "| --- | --- | --- | --- |",
        f"| bend | {c_time * ratio:.4f} s | {machine} | `bend run-c sum.bend` |",
        f"| C (gcc -O2) | {c_time:.4f} s | {machine} | `gcc -O2 sum.c && ./a.out` |",
    ))
