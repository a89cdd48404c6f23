"""`perfbot init`: look where a person would for the build (the root, first-level folders, the README's code
blocks), build each guess on the local runner (contained like every run) until one builds, find the program it
made, ask it `--help`, `-h` and nothing, and read the reports and example files for the fence tag and the program
extension. It always returns a `.perfbot.toml`: keys for what it verified, `TODO` lines for what it could not."""
from __future__ import annotations

import shutil
from dataclasses import dataclass, replace
from pathlib import Path

from bot.adapters.git import GitRepository
from bot.adapters.runners import make_runner
from bot.adapters.runners.base import BuildError
from bot.core.config import PerfbotFile, Runner
from bot.core.config import init_guess as guess
from bot.core.config.build import Build
from bot.core.config.init_guess import BuildGuess, Findings
from bot.core.reports.codeblocks import undeclared_tag
from bot.core.reports.parse import parse
from bot.errors import NotConfigured
from bot.services.adopt import workspace as workspace_files

_DECIDING = ("Cargo.toml",)  # read for what they name; .c files are read when there is one
_SKIPPED = frozenset({"devs", "docs", "doc", "node_modules", "target", "build", "builddir", "vendor", "third_party"})
_EXAMPLES = ("examples", "example", "tests", "test", "bench", "benchmarks", "programs", "samples")
_TRIES = 4  # builds tried at most: each one runs in the sandbox


@dataclass(frozen=True)
class InitResult:
    text: str
    guesses: tuple[str, ...]  # what was found or not, one line each, for the person to read
    built: bool


def init(repo_path: Path, cache_dir: Path) -> InitResult:
    repo = GitRepository(repo_path)
    try:
        sha = repo.resolve(repo.default_ref())
    finally:
        repo.close()
    compiler = next((c for c in ("gcc", "clang") if shutil.which(c)), None)
    if compiler is None:
        raise NotConfigured("neither gcc nor clang is installed here: a report's C translation needs one",
                            "install gcc or clang")
    root = Path(repo_path)
    found = Findings(compiler, fences=_report_tags(root))
    guesses = _build_guesses(root, compiler)
    notes: list[str] = []
    runner, workspace = None, Path()
    for build in guesses[:_TRIES]:
        try:
            build, runner, workspace = _built(root, cache_dir, sha, build)
        except BuildError as exc:
            notes.append(f"tried build: {' '.join(build.command)} (from {build.why}) FAILED at {sha[:12]}: "
                         f"{' '.join(str(exc).split())[-200:]}")
            found = found if found.build else replace(found, build=build, build_error=str(exc))
            continue
        found = replace(found, build=build, built=True, build_error=None)
        break
    lines = [*notes]
    if not guesses:
        lines.append(f"build: none found in {found.looked}")
    if found.built and found.build:
        lines.append(f"build: {' '.join(found.build.command)} (from {found.build.why})")
        binary, help_text = _runtime(runner, workspace, found.build.binary_hint, root)
        if binary is not None:
            run = guess.guess_run(binary, help_text)
            extension = run.extension or _example_extension(root)
            found = replace(found, run=run, binary=binary, extension=extension,
                            fences=found.fences or guess.program_tags([], extension))
            lines += [f"runtime: ./{binary}" + (f", programs *.{extension}" if extension else ""),
                      f"run: {' '.join(run.language)}", *(f"note: {note}" for note in run.notes)]
            if run.statistics:
                lines.append(f"note: {run.statistics} prints statistics (a TODO line in the file says how to use it)")
        else:
            lines.append("note: the build made no program perfbot can find; [run] language is a TODO line")
    lines.append(f"C compiler: {compiler}")
    if found.fences:
        lines.append(f"fence: {', '.join(found.fences)} (from the reports' code blocks)")
    return InitResult(guess.config_text(found), tuple(lines), found.built)


def _build_guesses(root: Path, compiler: str) -> list[BuildGuess]:
    """Root first, then the README's lines, then each first-level folder: the order a person looks in."""
    guesses = []
    top = _files(root)
    if (found_build := guess.guess_build(top, compiler)) is not None:
        guesses.append(found_build)
    for name in ("README.md", "README", "README.markdown", "readme.md"):
        if (root / name).is_file():
            guesses += guess.readme_builds(_text(root / name) or "")
            break
    for folder in sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith(".")
                         and p.name not in _SKIPPED):
        if (found_build := guess.guess_build(_files(folder), compiler, folder.name)) is not None:
            guesses.append(found_build)
    return list(dict.fromkeys(guesses))


def _files(folder: Path) -> dict[str, str | None]:
    return {p.name: _text(p) if p.name in _DECIDING or p.suffix == ".c" else None
            for p in folder.iterdir() if p.is_file()}


def _building(found: BuildGuess) -> PerfbotFile:
    """A configuration that only builds, as guessed: a README's command is not checked as a file's would be."""
    return PerfbotFile(build=Build.model_construct(command=tuple(found.command)))


def _built(repo_path: Path, cache_dir: Path, sha: str, build: BuildGuess):
    """The guessed build run on the local runner; once more with the define its error asks for, if any."""
    local = Runner(name="local", kind="local", labels=("c",))
    try:
        runner = make_runner(local, repo_path, cache_dir, _building(build), None)
        return build, runner, Path(runner.prepare(sha))
    except BuildError as exc:
        retry = guess.with_define(build, str(exc))
        if retry is None:
            raise
        runner = make_runner(local, repo_path, cache_dir, _building(retry), None)
        return retry, runner, Path(runner.prepare(sha))


def _runtime(runner, workspace: Path, hint: str | None, source: Path) -> tuple[str | None, str]:
    """The program the build made (an ELF file the repository does not hold) that answers `--help`, `-h` or no
    arguments with a usage line (the hint first), and all it answered."""
    made = [hint] if hint and (workspace / hint).is_file() else []
    made += workspace_files.programs(workspace, source)
    answers = []
    for name in list(dict.fromkeys(made))[:8]:
        said = []
        for args in (["--help"], ["-h"], []):
            result = runner.run([str(workspace / name), *args], workspace, 10)
            text = (result.stdout + result.stderr).strip()
            if text and text not in said:
                said.append(text)
        answer = "\n".join(said)
        if "usage" in answer.lower():
            return name, answer
        answers.append((name, answer))
    return answers[0] if answers else (None, "")


def _report_tags(root: Path) -> tuple[str, ...]:
    """The fence tags the reports give their programs that perfbot does not know: the runtime's own."""
    tags = []
    folder = root / "devs" / "issues"
    for path in sorted(folder.glob("perf_*.md"))[:50] if folder.is_dir() else []:
        record = parse(f"devs/issues/{path.name}", path.read_bytes(), PerfbotFile().reading).record
        if record is not None and (tag := undeclared_tag(record.code_blocks)) is not None:
            tags.append(tag)
    return guess.program_tags(tags, None)


def _example_extension(root: Path) -> str | None:
    names = [p.name for folder in _EXAMPLES if (root / folder).is_dir()
             for p in (root / folder).rglob("*") if p.is_file()][:500]
    return guess.example_extension(names)


def _text(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8", errors="replace")[:200_000]
    except OSError:
        return None
