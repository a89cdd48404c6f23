"""`perfbot init`: look at a repository, build it with the guessed command on the local runner (contained like
every run), find the runtime's binary, ask it `--help`, and write the `.perfbot.toml` that says what was found."""
from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

from bot.adapters.git import GitRepository
from bot.adapters.runners import make_runner
from bot.adapters.runners.base import BuildError
from bot.core.config import RepoConfig, Runner
from bot.core.config.init_guess import BuildGuess, config_text, guess_build, guess_run, with_define
from bot.errors import UserError

_DECIDING = ("Cargo.toml",)  # read for what they name; .c files are read when there is one
_BINARY_FOLDERS = (".", "bin", "build", "target/release")


@dataclass(frozen=True)
class InitResult:
    text: str
    guesses: tuple[str, ...]  # what was guessed, one line each, for the person to read
    built: bool


def init(repo_path: Path, cache_dir: Path) -> InitResult:
    repo = GitRepository(repo_path)
    try:
        sha = repo.resolve(repo.default_ref())
    finally:
        repo.close()
    compiler = next((c for c in ("gcc", "clang") if shutil.which(c)), None)
    if compiler is None:
        raise UserError("neither gcc nor clang is installed here: a report's C translation needs one")
    files = {p.name: _text(p) if p.name in _DECIDING or p.suffix == ".c" else None
             for p in Path(repo_path).iterdir() if p.is_file()}
    build = guess_build(files, compiler)
    if build is None:
        raise UserError(f"cannot tell how {repo_path} builds: no Makefile, CMakeLists.txt, build.sh, Cargo.toml "
                        "or single .c file at its root; write [build] command by hand (docs/adopt.md)")
    try:
        build, runner, workspace = _built(Path(repo_path), cache_dir, sha, build)
    except BuildError as exc:
        failed = (f"build: {' '.join(build.command)} (from {build.why}), which FAILED at {sha[:12]}: "
                  f"{str(exc)[-300:]}",)
        return InitResult(config_text(build, guess_run("runtime", ""), compiler, "runtime"), failed, False)
    guesses = [f"build: {' '.join(build.command)} (from {build.why})", f"C compiler: {compiler}"]
    binary, help_text = _runtime(runner, workspace, build.binary_hint)
    run = guess_run(binary, help_text)
    guesses += [f"runtime: ./{binary}" + (f", programs *.{run.extension}" if run.extension else ""),
                f"run: {' '.join(run.language)}", *(f"note: {note}" for note in run.notes)]
    return InitResult(config_text(build, run, compiler, binary), tuple(guesses), True)


def _built(repo_path: Path, cache_dir: Path, sha: str, build: BuildGuess):
    """The guessed build run on the local runner; once more with the define its error asks for, if any."""
    local = Runner(name="local", kind="local", labels=("c",))
    try:
        runner = make_runner(local, repo_path, cache_dir, RepoConfig(build=build.command), None)
        return build, runner, Path(runner.prepare(sha))
    except BuildError as exc:
        retry = with_define(build, str(exc))
        if retry is None:
            raise
        runner = make_runner(local, repo_path, cache_dir, RepoConfig(build=retry.command), None)
        return retry, runner, Path(runner.prepare(sha))


def _runtime(runner, workspace: Path, hint: str | None) -> tuple[str, str]:
    """The built program that answers `--help` with a usage line (the hint first), and that answer."""
    candidates = [hint] if hint else []
    for folder in _BINARY_FOLDERS:
        base = workspace / folder
        if base.is_dir():
            candidates += sorted(str(p.relative_to(workspace)) for p in base.iterdir() if _is_program(p))
    answers = []
    for name in dict.fromkeys(candidates):
        result = runner.run([str(workspace / name), "--help"], workspace, 10)
        answer = result.stdout + result.stderr
        if "usage" in answer.lower():
            return name, answer
        answers.append((name, answer))
    if not answers:
        raise UserError(f"the build made no program perfbot can find in {', '.join(_BINARY_FOLDERS)}; set [run] "
                        "language by hand")
    return answers[0]


def _is_program(path: Path) -> bool:
    try:
        with path.open("rb") as handle:
            return path.is_file() and handle.read(4) == b"\x7fELF"
    except OSError:
        return False


def _text(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8", errors="replace")[:200_000]
    except OSError:
        return None
