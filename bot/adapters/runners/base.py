"""What every runner offers verification, wherever it runs: a built workspace per commit, files written into
it, argument lists run with a timeout and limits, and one benchmark at a time per host."""
from __future__ import annotations

from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import PurePath
from typing import Protocol

from bot.errors import UserError

BUILT_MARK = ".perfbot-built"


class BuildError(UserError):
    """The project does not build at a commit; the message carries the command and the end of its output."""


@dataclass(frozen=True)
class RunResult:
    returncode: int
    stdout: str
    stderr: str
    seconds: float
    timed_out: bool = False
    # CPU time and page faults of the program and its children (wait4 rusage); None where a runner cannot tell.
    user: float | None = None
    system: float | None = None
    faults: int | None = None

    @property
    def ok(self) -> bool:
        return self.returncode == 0 and not self.timed_out


class Runner(Protocol):
    name: str
    kind: str  # local | ssh
    host: str  # where the numbers were measured, shown next to them
    build_timeout: int  # seconds a build may take

    def exclusive(self) -> AbstractContextManager[None]:
        """Held for a whole benchmark: nothing else runs on this host meanwhile."""

    def prepare(self, sha: str) -> PurePath:
        """The project checked out and built at `sha` (reused when built before); raises BuildError."""

    def run_dir(self, workspace: PurePath, slug: str) -> PurePath:
        """A folder for one report's programs inside the workspace; the slug is validated."""

    def write_file(self, path: PurePath, text: str) -> None:
        """Put a file the run needs (a reproduction, a translation) into a run folder."""

    def run(self, argv: list[str], cwd: PurePath, timeout: float) -> RunResult:
        """Run an argument list (never a shell) with the runner's limits; the time is the program's own."""

    def for_project(self, repo_path, build: tuple[str, ...] | None) -> "Runner":
        """The same host, limits and workspaces for another repository and build (a reference implementation);
        it shares this runner's lock, so only this runner's exclusive() is ever taken."""


def build_at(runner: Runner, build: tuple[str, ...] | None, workspace: PurePath, sha: str, timeout: float,
             where: str = "") -> None:
    """Run the project's build in a fresh workspace; a failure names the command, the commit and its output."""
    if not build:
        return
    result = runner.run(list(build), workspace, timeout)
    if not result.ok:
        why = "timed out" if result.timed_out else f"exited {result.returncode}"
        tail = (result.stderr or result.stdout).strip()[-600:]
        raise BuildError(f"build {' '.join(build)} at {sha[:12]}{where} {why}:\n{tail}")
