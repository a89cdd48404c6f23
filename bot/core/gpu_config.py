"""`[gpu]` of `.perfbot.toml`: how a metal or cuda report's program runs on the GPU, and what it must beat.

    [gpu]
    run = ["./bin/bend", "run-metal", "{file}"]   # the program forced onto the GPU ({file} {threads} {input})
    auto = ["./bin/bend", "run", "{file}"]        # optional: the runtime choosing CPU or GPU itself
    against_best_cpu = true     # the GPU must also beat the best CPU thread count, not only one thread
    min_speedup = 1.0           # the GPU's speedup over that CPU run a pass needs (1: it wins at all)
    auto_tolerance = 0.1        # `mode: auto` passes when auto is at most this much slower than the faster mode

The CPU side is `[run] language` at the sweep's thread counts (`[verify] threads`), on the same runner, which
`[[runners]]` picks by the report's backend label: the Mac mini with Metal, the NVIDIA box with CUDA.
"""
from __future__ import annotations

from dataclasses import dataclass

from bot.core.config_checks import ConfigFileError, check, line_of, table_values

GPU_KEYS = {"run": "argv", "auto": "argv", "against_best_cpu": "flag", "min_speedup": "positive",
            "auto_tolerance": "fraction"}


@dataclass(frozen=True)
class GpuSettings:
    run: tuple[str, ...] | None = None  # None: no [gpu]; a GPU report is then swept like a CPU one
    auto: tuple[str, ...] | None = None
    against_best_cpu: bool = True
    min_speedup: float = 1.0
    auto_tolerance: float = 0.1


def parse_gpu(table, lines: list[str]) -> GpuSettings:
    values = table_values("gpu", table, lines, GPU_KEYS, check)
    if values is None:
        return GpuSettings()
    if "run" not in values:
        raise ConfigFileError("gpu.run", line_of(lines, "gpu"), 'a [gpu] needs run = [...]: the program forced onto '
                              'the GPU, e.g. ["./bin/bend", "run-cuda", "{file}"]')
    return GpuSettings(**values)
