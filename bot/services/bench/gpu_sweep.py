"""A GPU report's verification: the program forced onto the GPU (`[gpu] run`) timed round-robin beside the CPU
(`[run] language` at one thread, and at the sweep's counts for "does the GPU win at all?"), and for a
`mode: auto` claim the runtime's own choice (`[gpu] auto`) beside both forced modes.

mode gpu: the speedup is the CPU run's time over the GPU's; the CPU run is the best thread count so far with
`against_best_cpu` (the default), else one thread; a pass needs the whole interval at `min_speedup` or above.
mode auto: the speedup is the faster forced mode's time over auto's; a pass needs auto within
`auto_tolerance` of it. Every warm-up run must print what one CPU thread prints (`[run] output`).
"""
from __future__ import annotations

from bot.core.config import PerfbotFile, fill
from bot.core.reports.records import PerfIssue
from bot.core.verify import gpu_modes
from bot.core.verify.outputs import normalised
from bot.core.verify.stats import SamplingPlan, decide_at_least
from bot.core.verify.verify_plan import configured, from_root, program_name, with_input
from bot.errors import NotConfigured
from bot.services.bench.measures import timed_rounds, wrap_for_measure
from bot.services.bench.sweep import host_cores, points_must_differ, warm_up


def is_gpu_report(record: PerfIssue, config: PerfbotFile) -> bool:
    return record.track == "par" and record.backend in ("metal", "cuda") and config.gpu.run is not None


def _name(mode) -> str:
    if mode == gpu_modes.GPU:
        return "the program forced onto the GPU"
    if mode == gpu_modes.AUTO:
        return "the program in the runtime's automatic mode"
    return f"the program on {mode} CPU thread{'s' if mode != 1 else ''}"


def measure_gpu(side, record: PerfIssue, language: str, config: PerfbotFile, runner, plan: SamplingPlan,
                progress, counter: dict) -> tuple[str, str] | None:
    """Fill `side` (verify.Side): `sweep` the CPU counts, `modes` the GPU (and auto) samples, `language` and
    `c` the two sample lists the verdict compares (re-pointed each round at the best CPU or faster mode)."""
    gpu = config.gpu
    auto = record.mode == gpu_modes.AUTO
    if auto and gpu.auto is None:
        raise NotConfigured(f"{record.slug} claims the automatic CPU/GPU choice (mode: auto), but .perfbot.toml has "
                            "no [gpu] auto = [...]", "add how the runtime runs a program choosing by itself",
                            key="[gpu] auto")
    side.measure = config.measure
    workspace = runner.prepare(side.sha)
    folder = runner.run_dir(workspace, record.slug)
    program = folder / program_name(record, config)
    runner.write_file(program, language)
    counts = gpu_modes.cpu_counts(config.verify.threads, None if config.verify.threads else host_cores(runner),
                                  gpu.against_best_cpu)
    gpu_threads = str(record.threads or 1)  # a GPU report's thread count is the GPU's, when its runtime takes one
    cpu_run = configured(config.run.language, "[run] language")
    templates: dict[int | str, list[str]] = {
        n: fill(with_input(cpu_run, side.input), file=str(program), threads=str(n)) for n in counts}
    templates[gpu_modes.GPU] = fill(with_input(configured(gpu.run, "[gpu] run"), side.input), file=str(program),
                                    threads=gpu_threads)
    if auto:
        templates[gpu_modes.AUTO] = fill(with_input(configured(gpu.auto, "[gpu] auto"), side.input),
                                         file=str(program), threads=gpu_threads)
    argv = {mode: wrap_for_measure(from_root(t, workspace), config, runner, folder, counter)
            for mode, t in templates.items()}
    at = f"at {side.sha[:12]}" + (f" (input {side.input})" if side.input else "")
    warmed, problem = warm_up(argv, _name, runner, folder, config, at)  # one CPU thread first: all print what it does
    if problem is not None:
        return problem
    points_must_differ(argv, warmed, config)
    side.output = normalised(warmed[1].stdout, config.run)
    side.sweep = {n: [] for n in counts}
    side.modes = {mode: [] for mode in argv if not isinstance(mode, int)}
    target = gpu_modes.auto_target(gpu.auto_tolerance) if auto else gpu.min_speedup
    decided = gpu_modes.AUTO if auto else gpu_modes.GPU

    def keep(mode, value: float, run: dict) -> None:
        (side.sweep if isinstance(mode, int) else side.modes)[mode].append(value)
        side.runs["c" if mode == decided else "language"].append({**run, "mode": str(mode)})

    def decide():
        _compare(side, auto)
        return plan.next_step(side.language, side.c, target, decide_at_least)

    return timed_rounds(side, list(argv), lambda mode: (argv[mode], folder, f"a timed run of {_name(mode)}"), keep,
                        decide, config=config, runner=runner, counter=counter, plan=plan, progress=progress, at=at)


def _compare(side, auto: bool) -> None:
    """Point the verdict's two lists at what this round says is the comparison: best CPU, or faster mode."""
    best = gpu_modes.best_cpu(side.sweep)
    if not auto:
        side.language, side.c = side.sweep[best], side.modes[gpu_modes.GPU]
        side.against = "the GPU" + (f" (against the best CPU count, {best} threads)" if len(side.sweep) > 1
                                    else " (against one CPU thread)")
        return
    faster = gpu_modes.faster_forced(side.sweep[best], side.modes[gpu_modes.GPU])
    side.language = side.modes[gpu_modes.GPU] if faster == gpu_modes.GPU else side.sweep[best]
    side.c = side.modes[gpu_modes.AUTO]
    side.against = f"auto (against the faster forced mode, {'the GPU' if faster == gpu_modes.GPU else f'CPU {best}'})"
