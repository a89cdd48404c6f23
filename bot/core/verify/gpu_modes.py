"""What a GPU verification compares, as pure functions: the CPU run the GPU must beat, the faster forced mode
the automatic choice must match, and the summary a bench run keeps of every mode."""
from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence

from bot.core.verify.stats import ratio_interval
from bot.core.verify.sweep_result import GpuMode, GpuSummary

GPU, AUTO = "gpu", "auto"


def cpu_counts(configured: Sequence[int] | None, cores: int | None, against_best_cpu: bool) -> tuple[int, ...]:
    """The CPU side: one thread, and with `against_best_cpu` the sweep (`[verify] threads`, else 1..the
    host's cores). A GPU report's thread count is the GPU's, never a CPU count."""
    if not against_best_cpu:
        return (1,)
    chosen = configured if configured else range(1, max(cores or 1, 1) + 1)
    return tuple(sorted({1, *chosen}))


def best_cpu(cpu: Mapping[int, Sequence[float]]) -> int:
    """The CPU thread count with the lowest median so far (one thread until others have samples)."""
    measured = [n for n, values in cpu.items() if values]
    return min(measured, key=lambda n: (statistics.median(cpu[n]), n)) if measured else 1


def faster_forced(cpu_samples: Sequence[float], gpu_samples: Sequence[float]) -> str:
    """Which forced mode the automatic choice should have picked: the one with the lower median."""
    return GPU if statistics.median(gpu_samples) < statistics.median(cpu_samples) else "cpu"


def auto_target(tolerance: float) -> float:
    """The least faster/auto speedup a correct automatic choice keeps: at most `tolerance` slower."""
    return 1 / (1 + tolerance)


def modes_summary(cpu: Mapping[int, Sequence[float]], gpu: Sequence[float], auto: Sequence[float]) -> GpuSummary:
    """Each mode's median and its speedup over one CPU thread (with interval), for comments and pages."""
    one = cpu.get(1) or []
    rows = {f"cpu {n}": samples for n, samples in sorted(cpu.items()) if samples}
    rows.update({name: samples for name, samples in ((GPU, gpu), (AUTO, auto)) if samples})
    return GpuSummary(tuple(GpuMode(name, statistics.median(samples), len(samples),
                                    ratio_interval(one, samples) if one and name != "cpu 1" else None)
                            for name, samples in rows.items()), best_cpu(cpu))
