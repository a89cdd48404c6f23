"""The local runner: a git worktree per commit in a cache folder, built once, programs run with limits.

Everything runs as an argument list (never a shell) in its own process group, so a timeout kills the
whole tree; memory is capped with RLIMIT_AS. One benchmark at a time per host: an flock on the cache.
Where bubblewrap works every run is also contained (sandbox.py): it may write only its working folder.
"""
from __future__ import annotations

import fcntl
import hashlib
import logging
import os
import resource
import shutil
import signal
import socket
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import git

from bot.adapters.runners.base import BUILT_MARK, RECIPE_MARK, BuildError, RunResult, build_at, recipe, script_folder
from bot.adapters.runners.sandbox import read_status, sandbox_argv, sandbox_problem, secret_files, timed_argv
from bot.core.build_config import BuildScript
from bot.core.records import SLUG_RE
from bot.errors import UserError

log = logging.getLogger(__name__)


class LocalRunner:
    kind = "local"

    def __init__(self, name: str, repo_path: Path, cache_dir: Path, *, build: tuple[str, ...] | None,
                 memory_mb: int = 4096, build_timeout: int = 900, sandbox: bool | None = None,
                 build_script: BuildScript | None = None) -> None:
        """`sandbox`: True demands bwrap (UserError when it cannot work here), False runs uncontained, None
        (the default) contains every run when bwrap works on this host and warns once when it does not."""
        self.name = name
        self.repo_path = Path(repo_path)
        self.cache_dir = Path(cache_dir)
        self.build = build
        self.build_script = build_script
        self.memory_mb = memory_mb
        self.build_timeout = build_timeout
        self.host = socket.gethostname()
        problem = sandbox_problem() if sandbox is not False else None
        if sandbox and problem:
            raise UserError(f"runner {name}: the sandbox was asked for but {problem}")
        if sandbox is None and problem:
            log.warning("runner %s runs reports' code uncontained: %s", name, problem)
        self.sandboxed = sandbox is not False and problem is None
        self._hidden = secret_files(os.environ) if self.sandboxed else ()

    def cores(self) -> int:
        """The CPUs this process may run on (a container's or taskset's share): the default sweep's top."""
        try:
            return len(os.sched_getaffinity(0))
        except (AttributeError, OSError):
            return os.cpu_count() or 1

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
        wanted = recipe(self.build, self.build_script)
        if (workspace / BUILT_MARK).exists():
            if (workspace / RECIPE_MARK).is_file() and (workspace / RECIPE_MARK).read_text() == wanted:
                return workspace
            shutil.rmtree(workspace)  # built by another recipe: a fresh checkout, not a build over the old one
        if not workspace.exists():
            repo = git.Repo(self.repo_path)
            try:
                repo.git.worktree("prune")
                repo.git.worktree("add", "--detach", "--force", str(workspace), sha)
            except git.GitCommandError as exc:
                raise BuildError(f"cannot check out {sha[:12]}: {exc.stderr.strip()[:300]}") from None
            finally:
                repo.close()
        build_at(self, self.build, workspace, sha, self.build_timeout, script=self._install_script(),
                 script_name=self.build_script.path if self.build_script else "{script}")
        (workspace / RECIPE_MARK).write_text(wanted)
        (workspace / BUILT_MARK).write_text(sha)
        return workspace

    def _install_script(self) -> Path | None:
        """`[build] script` from the configuration's source, beside the worktrees: an old checkout lacks it."""
        if self.build_script is None:
            return None
        path = self.cache_dir / script_folder(self.build_script) / self.build_script.name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(self.build_script.text, encoding="utf-8")
        path.chmod(0o755)
        return path

    def run_dir(self, workspace: Path, slug: str) -> Path:
        if not SLUG_RE.fullmatch(slug):
            raise UserError(f"not a report slug: {slug[:80]!r}")
        path = workspace / ".perfbot-run" / slug
        path.mkdir(parents=True, exist_ok=True)
        return path

    def write_file(self, path: Path, text: str) -> None:
        Path(path).write_text(text, encoding="utf-8")

    def run(self, argv: list[str], cwd: Path, timeout: float) -> RunResult:
        """Sandboxed, a run may write only to `cwd` (and a private /tmp): the build and the suite run in the
        workspace and write it; a report's compile and program run in its run folder and write only that."""
        limit = self.memory_mb * 1024 * 1024
        # A small timer (sandbox.timed_argv) starts the program and times it alone, so neither Python's
        # process spawning nor bwrap's namespace setup ends up in a sample; it also caps the program's memory.
        status_read, status_write = os.pipe()
        argv = timed_argv(status_write, limit, argv)
        if self.sandboxed:
            folder = Path(cwd).resolve()
            # The built workspaces stay readable (a run calls the project's binaries), and so does the Python
            # that runs the timer, wherever it lives (a virtualenv under /tmp is hidden by the private /tmp).
            argv = sandbox_argv(folder, path=os.environ.get("PATH", os.defpath), hidden=self._hidden,
                                readable=(self.cache_dir.resolve(), Path(sys.prefix), Path(sys.base_prefix))) + argv

        def limits() -> None:  # in the child, before exec: no core dumps on the bench host
            resource.setrlimit(resource.RLIMIT_CORE, (0, 0))

        started = time.perf_counter()
        try:
            process = subprocess.Popen(argv, cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                       stderr=subprocess.PIPE, start_new_session=True, preexec_fn=limits,
                                       pass_fds=(status_write,))
        except OSError as exc:
            self._close(status_read, status_write)
            return RunResult(127, "", f"cannot run {argv[0]}: {exc.strerror}", 0.0)
        self._close(status_write)
        try:
            out, err = process.communicate(timeout=timeout)
            timed_out = False
        except subprocess.TimeoutExpired:
            # Sandboxed, this kills bwrap; --die-with-parent then takes everything inside down with it.
            os.killpg(process.pid, signal.SIGKILL)
            out, err = process.communicate()
            timed_out = True
        seconds, returncode = time.perf_counter() - started, process.returncode
        os.set_blocking(status_read, False)
        try:
            report = read_status(os.read(status_read, 256))
        except BlockingIOError:  # the timer wrote nothing and something still holds the pipe: no wait
            report = None
        self._close(status_read)
        user = system = faults = None
        if report is not None and not timed_out:
            seconds, returncode, user, system, faults = report
        return RunResult(returncode, out.decode(errors="replace"), err.decode(errors="replace"), seconds,
                         timed_out, user, system, faults)

    def for_project(self, repo_path: Path, build: tuple[str, ...] | None) -> LocalRunner:
        """Worktrees of another repository or build in a folder of their own in the cache, contained alike."""
        key = hashlib.sha256(f"{Path(repo_path).resolve()}\0{build}".encode()).hexdigest()[:16]
        return LocalRunner(self.name, repo_path, self.cache_dir / "projects" / key, build=build, memory_mb=self.memory_mb,
                           build_timeout=self.build_timeout, sandbox=self.sandboxed)

    @staticmethod
    def _close(*fds: int | None) -> None:
        for fd in fds:
            if fd is not None:
                os.close(fd)
