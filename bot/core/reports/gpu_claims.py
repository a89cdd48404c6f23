"""A GPU claim: what a Metal or CUDA backend reaches over the CPU against what it should reach.

A GPU has no "one thread" of its own to scale from, so its claim is not N / speedup. The achieved speedup
is the GPU run's over one CPU thread (and over the best CPU thread count); the target is the speedup an
expected figure (a profile, a roofline) or a patched GPU run gives; the ratio is target / achieved.
"""
from __future__ import annotations

import re

from bot.core.reports.records import Measurement
from bot.core.reports.table_ratios import TableRatio, secs, significant
from bot.core.reports.tables import threads_in

GPU_BACKENDS = ("metal", "cuda")
_PATCHED = re.compile(r"(?i)\bpatch(?:ed|es)?\b|\bfix(?:ed)?\b|\bafter\b|\bproposed\b|\bwith the\b|\boptimi[sz]ed\b"
                      r"|\btuned\b|\btarget\b|\bimproved\b")
# A GPU row named as what ships today: the other GPU rows beside it are then what it should reach.
_SHIPPED = re.compile(r"(?i)\bshipped\b|\bshipping\b|\bcurrent\b|\btoday\b|\bas[- ]is\b|\bunpatched\b|\bbefore\b")


def gpu_claim(rows: tuple[Measurement, ...], expected: float | None, expected_quote: str = "") -> TableRatio | None:
    """The GPU claim the table (and an expected speedup stated in prose) makes, or None when there is none:
    no GPU run beside CPU runs, a GPU that scales on its own (-t 1 and -t N), or no target at all."""
    gpu = [r for r in rows if r.backend in GPU_BACKENDS and r.seconds and r.impl in ("language", "")]
    if not gpu or len({r.threads for r in gpu if r.threads}) >= 2:
        return None
    shipped = [r for r in gpu if not _PATCHED.search(r.label)]
    patched = [r for r in gpu if _PATCHED.search(r.label)]
    if not patched and len(shipped) >= 2 and any(_SHIPPED.search(r.label) for r in shipped):
        patched = [r for r in shipped if not _SHIPPED.search(r.label)]  # "CUDA (shipped)" beside "CUDA (coalesced)"
        shipped = [r for r in shipped if _SHIPPED.search(r.label)]
    if not shipped or (expected is None and not patched):
        return None
    cpu = [r for r in rows if r.seconds and r.backend not in GPU_BACKENDS and r.impl in ("language", "")]
    name = "Metal" if shipped[0].backend == "metal" else "CUDA"
    one = [r for r in cpu if (r.threads or threads_in(r.label) or 1) == 1]
    if not one:
        return TableRatio(kind="gpu", gap=f"the {name} row has no one-thread CPU row to compare with "
                                          f"(add the -T1 CPU time)")
    base, run = min(one, key=_time), min(shipped, key=_time)
    achieved = base.time / run.time
    if patched:
        fixed = min(patched, key=_time)
        target, how = base.time / fixed.time, f"'{fixed.label}' {secs(fixed.time)} (line {fixed.line})"
        targets = [base.time / r.time for r in patched]
    elif expected is not None:
        target, how = expected, f"the expected {expected:g}x" + (f" ('{expected_quote}')" if expected_quote else "")
        targets = [expected]
    else:  # unreachable: without a patched row only a stated expectation got this far
        return None
    ratio = significant(target / achieved)
    best = min(cpu, key=_time)
    over_best = (f" ({best.time / run.time:.3g}x over the best CPU run '{best.label}', line {best.line})"
                 if best is not base else "")
    evidence = (f"{name} '{run.label}' {secs(run.time)} against one CPU thread '{base.label}' "
                f"{secs(base.time)} = {achieved:.3g}x achieved (lines {run.line} and {base.line}){over_best}; "
                f"target {target:.3g}x from {how}; ratio {target:.3g} / {achieved:.3g}")
    return TableRatio(ratio, None, evidence, kind="gpu",
                      candidates=_candidates(shipped, one, cpu, targets, expected))


def _candidates(shipped: list[Measurement], one: list[Measurement], cpu: list[Measurement], targets: list[float],
                expected: float | None) -> tuple[float, ...]:
    """target / achieved for every shipped GPU row and baseline: one CPU thread, and the best CPU thread count
    (an expected speedup may be stated over either)."""
    best = min(cpu, key=_time)
    values = []
    for run in shipped:
        for base in (*one, best):
            achieved = base.time / run.time
            over = [t * (base.time / min(one, key=_time).time) for t in targets]  # patched: same baseline
            values += [t / achieved for t in over]
            if expected is not None:
                values.append(expected / achieved)
    return tuple(v for v in dict.fromkeys(significant(v) for v in values) if v)


def _time(run: Measurement) -> float:
    return run.time
