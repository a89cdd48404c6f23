"""The local runner: a git worktree per commit in a cache folder, built once, every run contained (contain.py).

The cache holds worktrees/<sha> (the checkout: the repository's, so perfbot never writes into it), built/<sha>
(the mark that it was built, and by which recipe), scripts/ and runs/: a fresh folder for each report's
programs, made with O_EXCL, written without following links (contain.put) and thrown away when the benchmark
ends, so a link a commit or a program planted is never written through.

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
from bot.adapters.runners.base import SHA_RE, BuildError, RunResult, build_at, recipe, run_folder_name, script_folder
from bot.core.config import BuildScript
from bot.core.reports.records import SLUG_RE
from bot.errors import Invalid, NotAllowed, NotConfigured

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
        self._made: set[Path] = set()  # the run folders this runner made: the only ones write_file writes into
        if sandbox == "bwrap":
            problem = contain.bwrap_problem()
            if problem:
                raise NotConfigured(f"runner {name} runs reports' code only in a sandbox, and {problem}",
                                    "the operator installs bubblewrap there (docs/deployment.md)")
        elif sandbox == "none":
            log.warning("runner %s runs reports' code UNCONTAINED (sandbox = \"none\"): it sees this host's "
                        "files and sockets; its results say so", name)
        else:
            raise Invalid(f'sandbox must be "bwrap" or "none", not {sandbox[:40]!r}', at=f"runner {name}",
                          key="sandbox")

    def cores(self) -> int:
        """The CPUs this process may run on (a container's or taskset's share): the default sweep's top."""
        try:
            return len(os.sched_getaffinity(0))
        except (AttributeError, OSError):
            return os.cpu_count() or 1

    @contextmanager
    def exclusive(self) -> Iterator[None]:
        """One benchmark at a time on this host, across processes; its run folders go with it."""
        self.cache_dir.mkdir(parents=True, exist_ok=True)
        with open(self.cache_dir / ".lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            try:
                yield
            finally:
                contain.sweep(str(self.cache_dir))
                fcntl.flock(lock, fcntl.LOCK_UN)

    def prepare(self, sha: str) -> Path:
        """The project checked out and built at `sha`; reused when it was built before by the same recipe."""
        if not SHA_RE.fullmatch(sha):
            raise Invalid(f"not a full commit sha: {sha[:60]!r}")
        workspace = self.cache_dir / "worktrees" / sha
        mark = self.cache_dir / "built" / sha
        wanted = recipe(self.build, self.build_script)
        if workspace.is_dir() and not workspace.is_symlink() and mark.is_file() and mark.read_text() == wanted:
            return workspace
        mark.unlink(missing_ok=True)
        if os.path.lexists(workspace):
            shutil.rmtree(workspace)  # half built, or by another recipe: a fresh checkout, not a build over it
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
        mark.parent.mkdir(exist_ok=True)
        contain.put(str(mark), wanted.encode())
        return workspace

    def _install_script(self) -> Path | None:
        """`[build] script` from the configuration's source, beside the worktrees: an old checkout lacks it."""
        if self.build_script is None:
            return None
        path = self.cache_dir / script_folder(self.build_script) / self.build_script.name
        path.parent.mkdir(parents=True, exist_ok=True)
        contain.put(str(path), self.build_script.content.encode("utf-8"), 0o755)
        return path

    def run_dir(self, workspace: Path, slug: str) -> Path:
        """A fresh folder for one report's programs, outside the checkout; gone when the benchmark ends."""
        if not SLUG_RE.fullmatch(slug):
            raise Invalid(f"not a report slug: {slug[:80]!r}")
        workspace = Path(workspace)
        if workspace.parent != self.cache_dir / "worktrees" or not SHA_RE.fullmatch(workspace.name):
            raise NotAllowed(f"{str(workspace)[:120]} is not a workspace of runner {self.name}",
                             rule="a runner's own folders")
        folder = Path(contain.fresh(str(self.cache_dir / "runs"), run_folder_name(workspace.name, slug)))
        self._made.add(folder)
        return folder

    def write_file(self, path: Path, text: str) -> None:
        """A file straight in a run folder this runner made, written without following a link."""
        path = Path(path)
        if path.parent not in self._made or path.name.startswith(".") or "/" in path.name:
            raise NotAllowed(f"{str(path)[:120]} is not in a run folder runner {self.name} made",
                             rule="a runner's own folders")
        contain.put(str(path), text.encode("utf-8"))

    def run(self, argv: list[str], cwd: Path, timeout: float) -> RunResult:
        """Contained, a run may write only to `cwd` (and a private /tmp) and read the workspace it is in: the
        build and the suite run in the workspace and write it; a report's programs write only their folder."""
        cwd = Path(cwd).resolve()
        answer = contain.run({"argv": argv, "cwd": str(cwd), "timeout": timeout, "memory_mb": self.memory_mb,
                              "processes": self.processes, "output_bytes": self.output_bytes,
                              "sandbox": self.sandbox, "workspace": str(self._workspace_of(cwd)),
                              # [build] script lives beside the worktrees, outside the checkout it builds
                              "scripts": str(self.cache_dir / "scripts"), "readable": [str(r) for r in self.readable],
                              "private": [str(self.cache_dir)], "cgroups": self.cgroups})
        return RunResult.from_answer(answer, self.name, self.secrets)

    def _workspace_of(self, cwd: Path) -> Path:
        """The built checkout a run folder was made for, or `cwd` lies in, shown read-only; else `cwd`."""
        if cwd.parent.name == "runs" and SHA_RE.fullmatch(cwd.name[:40]):  # this runner's, or a reference's
            return cwd.parent.parent / "worktrees" / cwd.name[:40]
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

