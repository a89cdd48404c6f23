"""Running the project's benchmark suite in built workspaces through a runner, base and head interleaved.

    run_suite(config, runner, workspace, samples, *, side="") -> dict[str, list[float]]
    measure_suites(config, runner, base_workspace, head_workspace, samples) -> (base, head)

`config` is the PerfbotFile whose `[suite]` says the command (an argument list, run in the workspace), its
output format and `samples`; `runner` is any runner (`prepare` gives the workspaces); the result maps each
benchmark to its times, one per run, ready for `bot.core.verify.suite.compare_suites(base, head, tolerance)`.
Call these inside `runner.exclusive()`, as verify does for its own runs: they do not take the host themselves.
A suite that cannot run, fails, times out or prints something unreadable raises SuiteError (a UserError)
saying which side, why, and the end of its stderr.
"""
from __future__ import annotations

from pathlib import PurePath

from bot.core.config import PerfbotFile
from bot.core.verify.suite import SuiteOutputError, parse_suite_output
from bot.errors import Invalid, NotConfigured

Samples = dict[str, list[float]]


class SuiteError(Invalid):
    """The suite did not give timings: where, why and what it printed last."""


def run_suite(config: PerfbotFile, runner, workspace: PurePath, samples: int, *, side: str = "") -> Samples:
    """`samples` runs of the suite in one workspace, back to back."""
    times: Samples = {}
    for _ in range(samples):
        _add(times, _run_once(config, runner, workspace, side))
    return times


def measure_suites(config: PerfbotFile, runner, base_workspace: PurePath, head_workspace: PurePath,
                   samples: int) -> tuple[Samples, Samples]:
    """`samples` runs on each side in the order base, head, base, head ...: a drift in the host's speed (heat,
    a neighbour's load) then falls on both sides alike instead of on whichever side ran second."""
    base: Samples = {}
    head: Samples = {}
    for _ in range(samples):
        _add(base, _run_once(config, runner, base_workspace, "base"))
        _add(head, _run_once(config, runner, head_workspace, "head"))
    return base, head


def _run_once(config: PerfbotFile, runner, workspace: PurePath, side: str) -> dict[str, float]:
    suite = config.suite
    if suite is None:
        raise NotConfigured("no [suite] in .perfbot.toml", "add its command and format to measure the project's suite",
                            key="[suite]")
    timeout = suite.timeout_seconds or config.verify.timeout_seconds
    command = " ".join(suite.command)
    where = f" at {side}" if side else ""
    result = runner.run(list(suite.command), workspace, timeout)
    tail = _tail(result.stderr or result.stdout)
    if result.timed_out:
        raise SuiteError(f"the suite `{command}`{where} ran past its {timeout}s limit "
                         f"([suite] timeout_seconds){tail}")
    if not result.ok:
        raise SuiteError(result.failure(f"the suite `{command}`", where.strip(), timeout, config.verify.memory_mb))
    try:
        return parse_suite_output(result.stdout, suite.format)
    except SuiteOutputError as exc:
        raise SuiteError(f"the suite `{command}`{where} printed no {suite.format} timings: {exc}"
                         f"{_tail(result.stderr)}") from None


def _add(times: Samples, run: dict[str, float]) -> None:
    for name, seconds in run.items():
        times.setdefault(name, []).append(seconds)


def _tail(text: str, keep: int = 600) -> str:
    text = text.strip()
    return f":\n{'...' if len(text) > keep else ''}{text[-keep:]}" if text else ""
