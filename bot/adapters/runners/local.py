"""The local runner: a git worktree per commit in a cache folder, built once, programs run with limits.

Everything runs as an argument list (never a shell) in its own process group, so a timeout kills the
whole tree; memory is capped with RLIMIT_AS. One benchmark at a time per host: an flock on the cache.
"""
from __future__ import annotations

import fcntl
import os
import resource
import signal
import socket
import subprocess
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import git

from bot.adapters.runners.base import BUILT_MARK, BuildError, RunResult
from bot.core.records import SLUG_RE
from bot.errors import UserError

class LocalRunner:
    kind = "local"

    def __init__(self, name: str, repo_path: Path, cache_dir: Path, *, build: tuple[str, ...] | None,
                 memory_mb: int = 4096, build_timeout: int = 900) -> None:
        self.name = name
        self.repo_path = Path(repo_path)
        self.cache_dir = Path(cache_dir)
        self.build = build
        self.memory_mb = memory_mb
        self.build_timeout = build_timeout
        self.host = socket.gethostname()

    @contextmanager
    def exclusive(self) -> Iterator[None]:
        """One benchmark at a time on this host, across processes."""
        self.cache_dir.mkdir(parents=True, exist_ok=True)
        with open(self.cache_dir / ".lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)

    def prepare(self, sha: str) -> Path:
        """The project checked out and built at `sha`; reused when it was built before."""
        workspace = self.cache_dir / "worktrees" / sha
        if (workspace / BUILT_MARK).exists():
            return workspace
        if not workspace.exists():
            repo = git.Repo(self.repo_path)
            try:
                repo.git.worktree("add", "--detach", "--force", str(workspace), sha)
            except git.GitCommandError as exc:
                raise BuildError(f"cannot check out {sha[:12]}: {exc.stderr.strip()[:300]}") from None
            finally:
                repo.close()
        if self.build:
            result = self.run(list(self.build), workspace, self.build_timeout)
            if not result.ok:
                why = "timed out" if result.timed_out else f"exited {result.returncode}"
                tail = (result.stderr or result.stdout).strip()[-600:]
                raise BuildError(f"build {' '.join(self.build)} at {sha[:12]} {why}:\n{tail}")
        (workspace / BUILT_MARK).write_text(sha)
        return workspace

    def run_dir(self, workspace: Path, slug: str) -> Path:
        if not SLUG_RE.fullmatch(slug):
            raise UserError(f"not a report slug: {slug[:80]!r}")
        path = workspace / ".perfbot-run" / slug
        path.mkdir(parents=True, exist_ok=True)
        return path

    def write_file(self, path: Path, text: str) -> None:
        Path(path).write_text(text, encoding="utf-8")

    def run(self, argv: list[str], cwd: Path, timeout: float) -> RunResult:
        limit = self.memory_mb * 1024 * 1024

        def limits() -> None:  # in the child, before exec: cap memory, and no core dumps on the bench host
            resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
            resource.setrlimit(resource.RLIMIT_CORE, (0, 0))

        started = time.perf_counter()
        try:
            process = subprocess.Popen(argv, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                       start_new_session=True, preexec_fn=limits)
        except OSError as exc:
            return RunResult(127, "", f"cannot run {argv[0]}: {exc.strerror}", 0.0)
        try:
            out, err = process.communicate(timeout=timeout)
            timed_out = False
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            out, err = process.communicate()
            timed_out = True
        seconds = time.perf_counter() - started
        return RunResult(process.returncode, out.decode(errors="replace"), err.decode(errors="replace"), seconds,
                         timed_out)
