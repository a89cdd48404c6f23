"""What a bench run reads before it measures, decided here for the CLI, the service and the Actions path alike:
`.perfbot.toml` and its build script (from the default branch, a ref named, or a file being tried), the report
(from the same commit, never required at the commits measured), and the options a command gave."""
from __future__ import annotations

import threading
from dataclasses import dataclass
from pathlib import Path
from weakref import WeakKeyDictionary

from bot.adapters.git import GitRepository
from bot.core.config import BuildScript, ConfigFileError, PerfbotFile, parse_repo_config, script_problem
from bot.core.config.check_advice import place
from bot.core.config.instance import DEFAULT_OPERATOR, OperatorConfig
from bot.core.config.lines import key_lines
from bot.core.reports.parse import parse
from bot.core.reports.records import FIXED_DIR, REPORT_DIR, PerfIssue, ReadingOptions
from bot.core.verify.bench_run import BenchRun, RunOptions
from bot.core.verify.sweep_checks import knob_problem
from bot.core.verify.verify_plan import with_measure
from bot.core.verify.vocabulary import Purpose
from bot.errors import Invalid, NotFound, UserError

FIX, REPRODUCE, GUARD = Purpose.FIX, Purpose.REPRODUCE, Purpose.GUARD  # guard: a fixed claim measured again
CONFIG_FILE = ".perfbot.toml"
_read: WeakKeyDictionary[GitRepository, dict[str, PerfbotFile]] = WeakKeyDictionary()  # read_config's, per clone
_read_lock = threading.Lock()


@dataclass(frozen=True)
class ConfigSource:
    """Where a verification's configuration and report come from. The measured commits never decide: a branch
    must not pick its own bench hosts or thresholds, and commits older than the configuration have none."""

    sha: str  # the report is read here, and `.perfbot.toml` and the build script too unless `file` is given
    ref: str  # as named, for messages: the default branch's name, or the ref a person gave
    file: Path | None = None  # `perfbot verify --config FILE`: a configuration tried before it is committed

    def describe(self) -> str:
        return str(self.file) if self.file else f"{CONFIG_FILE} at {self.ref} ({self.sha[:12]})"


def source_of(repo: GitRepository, ref: str | None = None, config_file: Path | None = None) -> ConfigSource:
    """The default branch unless a ref is named; a config file replaces only `.perfbot.toml` (and its script)."""
    name = ref or repo.default_ref()
    return ConfigSource(repo.resolve(name), name, Path(config_file) if config_file else None)


def bench_config(repo: GitRepository, source: ConfigSource, operator: OperatorConfig = DEFAULT_OPERATOR) -> PerfbotFile:
    """The configuration a run measures with, its build script loaded from the same place as the file itself,
    under the operator's runners, sandbox and ceilings (the file may narrow them, never widen)."""
    if source.file is not None:
        try:
            text = source.file.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            why = getattr(exc, "strerror", None) or exc
            raise Invalid(f"cannot read it: {why}", at=str(source.file)) from None
        config = _parsed(text, str(source.file))
    else:
        config = _parsed((repo.read_file(source.sha, CONFIG_FILE) or b"").decode("utf-8", "replace"), CONFIG_FILE)
    config = operator.narrow(config)
    script = config.build_script
    if script is None:
        return config
    loaded = BuildScript(script.path, _script_text(repo, source, script.path))
    problem = script_problem(loaded, config.build.argv)
    if problem:
        raise Invalid(problem, at=source.describe(), key="build.script")
    return config.with_script_text(loaded.content)


def refuse_without_knob(repo: GitRepository, source: ConfigSource, config: PerfbotFile, record: PerfIssue) -> None:
    """A PAR or GPU report whose `[run] language` has no {threads} is refused before any build, at the key's
    line in the file read (the CLI and a queued run alike): a sweep that varies nothing is no verdict."""
    if knob_problem(record, config) is None:
        return
    text = source.file.read_text(encoding="utf-8") if source.file else \
        (repo.read_file(source.sha, CONFIG_FILE) or b"").decode("utf-8", "replace")
    raise Invalid(knob_problem(record, config, place(key_lines(text), "run", "language")) or "")


def read_config(repo: GitRepository, sha: str) -> PerfbotFile:
    """`.perfbot.toml` at `sha` (the default branch), parsed only: for what does not build (digest, fix flags).
    Parsed once per opened clone and commit: a delivery's handlers share one clone (RepoSource.session), and a
    commit's file never changes."""
    with _read_lock:
        known = _read.setdefault(repo, {})
        if sha not in known:
            known[sha] = _parsed((repo.read_file(sha, CONFIG_FILE) or b"").decode("utf-8", "replace"), CONFIG_FILE)
        return known[sha]


def reading_at(repo: GitRepository, sha: str) -> ReadingOptions:
    """How `.perfbot.toml` at `sha` reads reports (its fence tags, its reference factor), for sync and dedup; a
    file that does not parse leaves the defaults (its errors are for `perfbot check` and the bench run to name)."""
    try:
        return read_config(repo, sha).reading
    except UserError:
        return ReadingOptions()


def read_record(repo: GitRepository, slug: str, *shas: str, reading: ReadingOptions = ReadingOptions(),
                where: str = "the default branch or the head") -> PerfIssue:
    """The report from the first of `shas` that has it, read as the configuration reads reports (`reading`):
    the configuration's commit first, so the commits measured (older than the report, often) need not carry it.
    A fixed report moved to devs/fixed is still the reproduction its guard measures."""
    path = f"{REPORT_DIR}/{slug}.md"
    for sha in shas:
        for candidate in (path, f"{FIXED_DIR}/{slug}.md"):
            data = repo.read_file(sha, candidate)
            record = parse(candidate, data, reading).record if data is not None else None
            if record is not None:
                return record
    raise NotFound(f"cannot verify {slug}: {path} is not on {where}", name=slug)


def for_run(repo: GitRepository, run: BenchRun,
            operator: OperatorConfig = DEFAULT_OPERATOR) -> tuple[PerfbotFile, PerfIssue]:
    """A queued run's configuration (with its command's options) and report: the default branch's, the
    report falling back to the head for a fix that adds its own report."""
    source = source_of(repo)
    config = with_options(bench_config(repo, source, operator), run.options)
    record = read_record(repo, run.slug, source.sha, run.head, reading=config.reading)
    refuse_without_knob(repo, source, config, record)
    return with_measure(config, record), record


def with_options(config: PerfbotFile, options: RunOptions) -> PerfbotFile:
    """A command's samples=N caps the plan (and lowers its minimum to match)."""
    samples = options.samples
    if not samples:
        return config
    return config.with_verify(max_samples=samples, min_samples=min(config.verify.min_samples, samples))


def _parsed(text: str, name: str) -> PerfbotFile:
    try:
        return parse_repo_config(text)
    except ConfigFileError as exc:
        raise Invalid(exc.problem, at=name, line=exc.line, key=exc.key) from None


def _script_text(repo: GitRepository, source: ConfigSource, path: str) -> str:
    if source.file is not None:  # tried with its script from the working tree: both can change before a commit
        found, where = repo.path / path, f"the working tree of {repo.path}"
        data = found.read_bytes() if found.is_file() else None
    else:
        data, where = repo.read_file(source.sha, path), f"{source.ref} ({source.sha[:12]})"
    if data is None:
        raise NotFound(f"{source.describe()}: build.script: {path} is not in {where}",
                       "commit it there (it is never taken from the commits measured)", name=path)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise Invalid(f"{path} is not UTF-8 text", at=source.describe(), key="build.script") from None
