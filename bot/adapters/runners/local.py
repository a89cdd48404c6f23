"""The local runner: a git worktree per commit in a cache folder, built once, every run contained (contain.py).

Everything runs as an argument list (never a shell), sandboxed with bubblewrap unless this runner opted out
(`sandbox = "none"`), with the limits contain.py applies to the whole process tree. One benchmark at a time
per host: an flock on the cache. No sandbox, no run: a runner that needs bwrap where it cannot work refuses.
"""
from __future__ import annotations

import fcntl
import hashlib
import logging
import os
import shutil
import socket
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import git

from bot.adapters.runners import contain
from bot.adapters.runners.base import BUILT_MARK, RECIPE_MARK, BuildError, RunResult, build_at, recipe, script_folder
from bot.core.config import BuildScript
from bot.core.reports.records import SLUG_RE
from bot.errors import UserError

log = logging.getLogger(__name__)


class LocalRunner:
    kind = "local"

    def __init__(self, name: str, repo_path: Path, cache_dir: Path, *, build: tuple[str, ...] | None,
                 memory_mb: int = 4096, build_timeout: int = 900, sandbox: str = "bwrap",
                 build_script: BuildScript | None = None, readable: Sequence[Path] = (), processes: int = 256,
                 output_mb: int = 16, cgroups: bool = True, secrets: tuple[str, ...] = ()) -> None:
        """`sandbox`: "bwrap" contains every run and refuses to start where bwrap cannot work; "none" is a
        person's choice for a dedicated bench host, logged here and shown beside every result. `readable`:
        folders shown read-only inside ([sandbox] readable); `cgroups` False tries the fallback limits."""
        self.name = name
        self.repo_path = Path(repo_path)
        self.cache_dir = Path(cache_dir)
        self.build = build
        self.build_script = build_script
        self.memory_mb = memory_mb
        self.build_timeout = build_timeout
        self.host = socket.gethostname()
        self.sandbox, self.readable, self.processes = sandbox, tuple(Path(r) for r in readable), processes
        self.output_bytes, self.cgroups, self.secrets = output_mb << 20, cgroups, secrets
        if sandbox == "bwrap":
            problem = contain.bwrap_problem()
            if problem:
                raise UserError(f"runner {name} runs reports' code only in a sandbox, and {problem}; the operator "
                                "installs bubblewrap there (docs/deployment.md)")
        elif sandbox == "none":
            log.warning("runner %s runs reports' code UNCONTAINED (sandbox = \"none\"): it sees this host's "
                        "files and sockets; its results say so", name)
        else:
            raise UserError(f'runner {name}: sandbox must be "bwrap" or "none", not {sandbox[:40]!r}')

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
        path.write_text(self.build_script.content, encoding="utf-8")
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
        """Contained, a run may write only to `cwd` (and a private /tmp) and read the workspace it is in: the
        build and the suite run in the workspace and write it; a report's programs write only their folder."""
        cwd = Path(cwd).resolve()
        answer = contain.run({"argv": argv, "cwd": str(cwd), "timeout": timeout, "memory_mb": self.memory_mb,
                              "processes": self.processes, "output_bytes": self.output_bytes,
                              "sandbox": self.sandbox, "workspace": str(self._workspace_of(cwd)),
                              # [build] script lives beside the worktrees, outside the checkout it builds
                              "readable": [str(r) for r in (*self.readable, self.cache_dir / "scripts")],
                              "cgroups": self.cgroups})
        return RunResult.from_answer(answer, self.name, self.secrets)

    def _workspace_of(self, cwd: Path) -> Path:
        """The built checkout `cwd` lies in (a report's folder sits inside one), shown read-only; else `cwd`."""
        for folder in (cwd, *cwd.parents):
            if folder.parent.name == "worktrees":
                return folder
        return cwd

    def for_project(self, repo_path: Path, build: tuple[str, ...] | None) -> LocalRunner:
        """Worktrees of another repository or build in a folder of their own in the cache, contained alike."""
        key = hashlib.sha256(f"{Path(repo_path).resolve()}\0{build}".encode()).hexdigest()[:16]
        return LocalRunner(self.name, repo_path, self.cache_dir / "projects" / key, build=build,
                           memory_mb=self.memory_mb, build_timeout=self.build_timeout, sandbox=self.sandbox,
                           readable=self.readable, processes=self.processes, output_mb=self.output_bytes >> 20,
                           cgroups=self.cgroups, secrets=self.secrets)

