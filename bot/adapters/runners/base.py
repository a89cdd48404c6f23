"""What every runner offers verification, wherever it runs: a built workspace per commit, files written into
it, argument lists run with a timeout and limits, and one benchmark at a time per host."""
from __future__ import annotations

import hashlib
import re
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path, PurePath
from typing import Protocol, TypeVar

from bot.core.config import BuildScript, build_argv
from bot.core.tracker.outgoing import scrub
from bot.core.verify.failures import Evidence, Failure, classify
from bot.errors import Invalid, NotConfigured

SHA_RE = re.compile(r"[0-9a-f]{40}")


class BuildError(Invalid):
    """The project does not build (or check out) at a commit: the input measured is not runnable as given; the
    problem carries the command and the end of its output."""


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
    limit: str | None = None  # the limit that ended the run: time, memory, processes or output (kept, cut short)
    load: float | None = None  # the host's 1-minute load average before the run
    steal: float | None = None  # the share of the host's CPU time a hypervisor took during the run
    cores: int | None = None  # CPUs the run could use on that host
    memory_total_mb: int | None = None  # the host's memory, for hints about a runtime's own reservation

    @classmethod
    def from_answer(cls, answer: dict, runner: str, secrets: tuple[str, ...] = ()) -> RunResult:
        """contain.run's answer, scrubbed of `secrets`; a refused run (no sandbox where one is required) is a
        refusal of the host's configuration."""
        if answer.get("refused"):
            raise NotConfigured(f"runner {runner}: {answer['refused']}", owner="operator")
        return cls(int(answer["returncode"]), scrub(answer["stdout"], secrets), scrub(answer["stderr"], secrets),
                   float(answer["seconds"]),
                   bool(answer["timed_out"]), answer.get("user"), answer.get("system"), answer.get("faults"),
                   answer.get("limit"), answer.get("load"), answer.get("steal"), answer.get("cores"),
                   answer.get("memory_total_mb"))

    @property
    def ok(self) -> bool:
        return self.returncode == 0 and not self.timed_out and self.limit not in ("memory", "processes")

    def failure(self, what: str, at: str, timeout: float, memory_mb: int) -> str:
        """Why `what` did not end well, in words that name the limit and the key that raises it."""
        return str(self.classified(what, at, timeout, memory_mb))

    def classified(self, what: str, at: str, timeout: float, memory_mb: int) -> Failure:
        return classify(Evidence(self.returncode, self.stdout, self.stderr, self.timed_out, self.limit,
                                 self.memory_total_mb), what, at, timeout, memory_mb)


PathT = TypeVar("PathT", bound=PurePath)


class Runner(Protocol[PathT]):
    """A runner's paths are its host's (Path here, PurePosixPath on a bench host): only it makes and takes them."""

    name: str
    kind: str  # local | ssh
    host: str  # where the numbers were measured, shown next to them
    build_timeout: int  # seconds a build may take
    memory_mb: int  # the memory cap of a run's whole process tree
    sandbox: str  # bwrap (contained) or none (an opted-out bench host: shown beside every result)

    def exclusive(self) -> AbstractContextManager[None]:
        """Held for a whole benchmark: nothing else runs on this host meanwhile."""

    def prepare(self, sha: str) -> PathT:
        """The project checked out and built at `sha` (reused when built before); raises BuildError."""

    def run_dir(self, workspace: PathT, slug: str) -> PathT:
        """A fresh folder for one report's programs, outside the checkout, made for this call (never reused)
        and thrown away when exclusive() ends; the slug and the workspace are validated."""

    def write_file(self, path: PathT, text: str) -> None:
        """Put a file the run needs (a reproduction, a translation) straight into a run folder run_dir made,
        never through a link (a name a program planted there is replaced, not followed)."""

    def run(self, argv: list[str], cwd: PathT, timeout: float) -> RunResult:
        """Run an argument list (never a shell) with the runner's limits; the time is the program's own."""

    def cores(self) -> int | None:
        """CPUs the host gives a run (None: cannot tell): a par sweep's default is 1..this."""

    def for_project(self, repo_path: Path, build: tuple[str, ...] | None) -> Runner[PathT]:
        """The same host, limits and workspaces for another repository and build (a reference implementation);
        it shares this runner's lock, so only this runner's exclusive() is ever taken."""


def build_at(runner: Runner[PathT], build: tuple[str, ...] | None, workspace: PathT, sha: str, timeout: float,
             where: str = "", script: PurePath | None = None, script_name: str = "{script}") -> None:
    """Run the project's build in a fresh workspace; a failure names the command, the commit and its output.
    `script` is where the runner put `[build] script` (outside the checkout), for the {script} placeholder;
    messages show it as `script_name`, its path in the repository."""
    if not build:
        return
    argv = build_argv(build, checkout=str(workspace), sha=sha, script=str(script) if script is not None else None)
    result = runner.run(argv, workspace, timeout)
    if not result.ok:
        shown = " ".join(arg.replace("{script}", script_name) for arg in build)
        raise BuildError(result.failure(f"build {shown}", f"at {sha[:12]}{where}", timeout, runner.memory_mb))


def recipe(build: tuple[str, ...] | None, script: BuildScript | None) -> str:
    """A digest of how a workspace is built; a workspace built otherwise is not reused."""
    text = "\0".join(build or ()) + "\0\0" + (script.text or "" if script else "")
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def run_folder_name(sha: str, slug: str) -> str:
    """The start of a run folder's name (contain.fresh adds random letters): the commit names the workspace."""
    return f"{sha}.{slug}."


def script_folder(script: BuildScript) -> str:
    """`scripts/<digest>`: content-addressed, so two configurations tried one after the other never share one."""
    if script.text is None:
        raise Invalid(f"build.script {script.path} was not loaded from the configuration's source")
    return f"scripts/{hashlib.sha256(script.text.encode('utf-8')).hexdigest()[:16]}"
