"""Runners: where benchmarks run (local worktrees, or a bench host over ssh), behind one small interface."""
from __future__ import annotations

from pathlib import Path

from bot.adapters.runners.local import LocalRunner
from bot.adapters.runners.ssh import SshOptions, SshRunner
from bot.core.repo_config import RepoConfig, Runner
from bot.errors import UserError

__all__ = ["LocalRunner", "SshOptions", "SshRunner", "make_runner"]


def make_runner(runner_conf: Runner, repo_path: Path, cache_dir: Path, config: RepoConfig,
                ssh: SshOptions | None) -> LocalRunner | SshRunner:
    """The runner a `[[runners]]` entry describes; `cache_dir` serves local runners, `ssh` remote ones."""
    if runner_conf.kind == "local":
        return LocalRunner(runner_conf.name, repo_path, cache_dir, build=config.build, memory_mb=config.memory_mb,
                           build_script=config.build_script)
    if runner_conf.kind == "ssh":
        if ssh is None:
            raise UserError(f"runner {runner_conf.name} is an ssh runner but no ssh settings were given")
        return SshRunner(runner_conf.name, runner_conf.host or "", options=ssh, repo_path=repo_path,
                         user=runner_conf.user, port=runner_conf.port, path=runner_conf.path, build=config.build,
                         memory_mb=config.memory_mb, build_script=config.build_script)
    if runner_conf.kind == "actions":
        # A workflow run finishes minutes later through a webhook: only the service can wait for that.
        raise UserError(f"runner {runner_conf.name} runs on GitHub Actions, which the service dispatches and hears "
                        "back from: ask on the pull request (`/perf verify runner=" + runner_conf.name + "`), or pass "
                        "--runner with a local or ssh runner")
    raise UserError(f"runner {runner_conf.name}: unknown kind {runner_conf.kind!r}")
