"""Runners: where benchmarks run (local worktrees, or a bench host over ssh), behind one small interface."""
from __future__ import annotations

import os
from pathlib import Path
from typing import TypedDict

from bot.adapters.runners import contain
from bot.adapters.runners.local import LocalRunner
from bot.adapters.runners.ssh import SshOptions, SshRunner
from bot.core.config import BuildScript, PerfbotFile, Runner
from bot.errors import Invalid, NotAllowed, NotConfigured

__all__ = ["LocalRunner", "SshOptions", "SshRunner", "make_runner", "readable_problem"]


def readable_problem(folder: Path | str, private: tuple[Path, ...] = ()) -> str | None:
    """Why this host may not show `folder` to a report's code (None: it may), its links resolved first: the
    folder shown is the one named. The rules are contain.shown_problem's, which the host that runs the code
    applies again; `private`: perfbot's own folders here (the instance, the home, keys and secret files)."""
    named = str(folder)
    if not named.startswith("/"):
        return f"{named[:120]!r} is not an absolute folder"
    real = os.path.realpath(named)
    if real != os.path.normpath(named):
        return f"{named[:120]} is a link to {real[:120]}: name the folder itself"
    return contain.shown_problem(real, tuple(os.path.realpath(str(p)) for p in private))


class _Limits(TypedDict):
    """What local and ssh runners both take from the configuration."""

    memory_mb: int
    build_script: BuildScript | None
    sandbox: str
    processes: int
    output_mb: int
    secrets: tuple[str, ...]


def make_runner(runner_conf: Runner, repo_path: Path, cache_dir: Path, config: PerfbotFile,
                ssh: SshOptions | None, *, service: bool = False, private: tuple[Path, ...] = (),
                secrets: tuple[str, ...] = ()) -> LocalRunner | SshRunner:
    """The runner a `[[runners]]` entry describes; `cache_dir` serves local runners, `ssh` remote ones.
    `service`: the bot's own host is no bench host, so a local runner must be named in the instance file.
    `private`: folders of this host no `[sandbox] readable` may show (the instance folder, the home); the
    readable folders are an allow-list, each checked by readable_problem.
    `secrets`: scrubbed from everything a run prints, before perfbot reads, stores or posts any of it."""
    limits: _Limits = {"memory_mb": config.verify.memory_mb, "build_script": config.build_script,
                       "sandbox": runner_conf.sandbox,
                       "processes": config.operator.sandbox.processes,
                       "output_mb": config.operator.sandbox.output_mb, "secrets": secrets}
    if runner_conf.kind == "local":
        if service and not config.operator.runners_named:
            raise NotAllowed("benchmarks run on bench hosts, never on the bot's own machine",
                             "the operator adds a [[runners]] entry for a bench host (kind = \"ssh\") to the instance "
                             "file (instance/perfbot.toml), or names kind = \"local\" there to allow this host on "
                             "purpose", rule="the operator's runners")
        shown = tuple(Path(r) for r in config.operator.sandbox.readable)
        for folder in shown:
            problem = readable_problem(folder, private)
            if problem:
                raise NotAllowed(f"[sandbox] readable: {problem}",
                                 "the operator names another folder in the instance file", rule="[sandbox] readable")
        return LocalRunner(runner_conf.name, repo_path, cache_dir, build=config.build.argv, readable=shown, **limits)
    if runner_conf.kind == "ssh":
        if ssh is None:
            raise NotConfigured(f"runner {runner_conf.name} is an ssh runner but no ssh settings were given",
                                key="PERFBOT_SSH_KEY and PERFBOT_SSH_KNOWN_HOSTS", owner="operator")
        return SshRunner(runner_conf.name, runner_conf.host or "", options=ssh, repo_path=repo_path,
                         user=runner_conf.user, port=runner_conf.port, path=runner_conf.path, build=config.build.argv,
                         readable=config.operator.sandbox.readable, **limits)
    if runner_conf.kind == "actions":
        # A workflow run finishes minutes later through a webhook: only the service can wait for that.
        raise Invalid(f"runner {runner_conf.name} runs on GitHub Actions, which the service dispatches and hears "
                      "back from", f"ask on the pull request (`/perf verify runner={runner_conf.name}`), or pass "
                      "--runner with a local or ssh runner")
    raise Invalid(f"unknown kind {runner_conf.kind!r}", 'kind is "local", "ssh" or "actions"',
                  at=f"runner {runner_conf.name}", key="kind")
