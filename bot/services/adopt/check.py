"""`perfbot check`: does this configuration work on this repository? It builds one commit with the configured
runner, runs every report's program and C translation once, and says for each failure which key fixes it.

Nothing is measured here (one run is no benchmark): this is the loop a team runs after `perfbot init` and after
each change of `.perfbot.toml`, before `perfbot verify` spends its samples.
"""
from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from bot.adapters.runners.base import BuildError
from bot.core.config import RepoConfig, fill
from bot.core.config import check_advice as advice
from bot.core.config.lines import Path
from bot.core.reports.records import PerfIssue
from bot.core.verify.failures import Failure, Kind, option_base
from bot.core.verify.outputs import metrics_of, normalised
from bot.core.verify.verify_plan import configured, from_root, inputs_of, program_name, programs, with_input
from bot.errors import UserError
from bot.services.adopt import workspace as workspace_files


@dataclass
class ReportCheck:
    slug: str
    runs: bool | None = None  # None: not reached
    equal: bool | None = None
    metrics: dict[str, float] | None = None  # None: no [run] metrics
    language_seconds: float | None = None
    c_seconds: float | None = None
    problem: str | None = None
    fixes: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # worth doing, not wrong
    failure: Failure | None = None  # why the program did not run, classified

    @property
    def ok(self) -> bool:
        return self.problem is None


@dataclass
class CheckResult:
    sha: str
    built: bool
    build_configured: bool = True  # False: no [build] command or script, so nothing was built
    build_problem: str | None = None
    build_fixes: list[str] = field(default_factory=list)
    script: str | None = None  # the per-revision `[build] script` proposed, to write where the person says
    reports: list[ReportCheck] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.built and all(r.ok for r in self.reports)


# A callable that names the commit after `sha` up to the default branch that introduced a text (`git log -S`).
Introduced = Callable[[str], str | None]


def check(config: RepoConfig, index: dict[Path, int] | None, runner, sha: str, records: list[PerfIssue], *,
          older: bool = False, introduced: Introduced | None = None) -> CheckResult:
    """`older`: `sha` is not the default branch, so a failure there is answered with a `[build] script`."""
    configured = bool(config.build) or config.build_script is not None
    with runner.exclusive():
        try:
            workspace = runner.prepare(sha)
        except BuildError as exc:
            failed = CheckResult(sha, False, configured, str(exc), _build_fixes(config, index, str(exc), older))
            failed.script = _script_of(failed.build_fixes)
            return failed
        result = CheckResult(sha, True, configured,
                             reports=[_report(config, index, runner, workspace, sha, r, older) for r in records])
    if older:
        result.build_fixes = _older_fixes(config, index, result, workspace, introduced)
        result.script = _script_of(result.build_fixes)
    return result


def _build_fixes(config: RepoConfig, index, failure: str, older: bool) -> list[str]:
    if config.build_script is not None:
        return [f"the build script {config.build_script.path} ({advice.place(index, 'build', 'script')}) fails "
                "at this commit: make it handle this revision too (it gets the checkout as $1, the commit as $2)"]
    if not older:
        return [f"set {advice.place(index, 'build', 'command')} to the command that builds the runtime in its "
                "checkout, e.g. [\"make\"]"]
    return _script_fixes(index, advice.build_script(config.build, failure))


_SCRIPT_FIX = "commit .perfbot/build.sh (chmod +x) reading:\n"


def _script_of(fixes: list[str]) -> str | None:
    return next((fix.removeprefix(_SCRIPT_FIX) + "\n" for fix in fixes if fix.startswith(_SCRIPT_FIX)), None)


def _script_fixes(index, script: str) -> list[str]:
    return ["this commit does not work with the default branch's build: keep a script on the default branch "
            "that builds every revision (and drop [build] command: the script gets the checkout and the commit); "
            + advice.write_in(index, "build", ['script = ".perfbot/build.sh"']),
            _SCRIPT_FIX + script.rstrip("\n")]


def _older_fixes(config: RepoConfig, index, result: CheckResult, workspace, introduced: Introduced | None
                 ) -> list[str]:
    """Runs that fail at an old commit while it builds: what differs from the default branch (a flag its
    runtime does not take yet, a define it calls by another name) goes into a per-revision build script."""
    failed = [r for r in result.reports if r.failure is not None]
    if not failed or config.run_language is None:
        return []
    sources = workspace_files.sources(workspace)
    runtime = config.run_language[0].removeprefix("./")
    rejected = {option_base(r.failure.flag) for r in failed if r.failure and r.failure.flag}
    flags: dict[str, tuple[str, str, str]] = {}
    for flag in dict.fromkeys(a for a in config.run_language if re.fullmatch(r"-{1,2}[A-Za-z][\w-]*", a)):
        since = introduced(f'"{flag}') if introduced else None
        # New since this commit: the runtime said so, or its sources here lack the option the default branch added.
        if flag in rejected or (since and sources and not any(f'"{flag}' in text for text in sources.values())):
            flags[flag] = (flag, runtime, since or "a later commit")
            for report in failed:
                report.fixes.insert(0, f"{flag} is in [run] language, and the runtime takes it only "
                                       f"{'since ' + since if since else 'at later commits'}: the build script "
                                       "below drops it at older commits")
    renamed = _renamed_define(config.build, sources)
    if renamed is None:  # the same define sizes the heap here: the fix is the default branch's, at this commit too
        for report in failed:
            if report.failure and report.failure.kind in (Kind.RESERVATION, Kind.ADDRESS_SPACE):
                _heap_fix(report, report.failure, config, index, sources)
    if config.build_script is not None:
        if flags or renamed:
            return [f"the build script {config.build_script.path} ({advice.place(index, 'build', 'script')}) "
                    "builds this commit, but its runs fail: make it handle " + ", ".join(
                        [*(f"the missing {f}" for f in flags), *([f"the define {renamed}"] if renamed else [])])]
        return []
    if not flags and not renamed:
        return []
    return _script_fixes(index, advice.build_script(config.build, "", renamed=renamed, flags=tuple(flags.values())))


def _renamed_define(build: tuple[str, ...] | None, sources: dict[str, str]) -> str | None:
    """A define the build passes that this checkout does not know, and the one it guards on instead (the
    guarded name sharing most words with it; an include guard is none)."""
    for arg in build or ():
        name = arg[2:].split("=", 1)[0] if arg.startswith("-D") else None
        if name and sources and not any(name in text for text in sources.values()):
            words = set(name.split("_"))
            guarded = {other for text in sources.values()
                       for other in re.findall(r"#\s*if(?:n?def)?\s+(?:defined\s*\(?\s*)?([A-Z_][A-Z0-9_]{2,})", text)
                       if words & set(other.split("_")) and not other.endswith("_H")}
            if guarded:
                return max(sorted(guarded), key=lambda other: len(words & set(other.split("_"))))
    return None


def _report(config: RepoConfig, index, runner, workspace, sha: str, record: PerfIssue, older: bool
            ) -> ReportCheck:
    result = ReportCheck(record.slug)
    try:
        language, translation = programs(record, config)
    except UserError as exc:
        result.problem = str(exc)
        fence = advice.fence_fix(record, config.run.fence, index)
        if fence:
            result.fixes.append(fence)
        if config.run_language is None:
            result.fixes.append(f"set {advice.place(index, 'run', 'language')}: how the runtime runs a program "
                                'file, e.g. ["./runtime", "{file}"]')
        return result
    folder = runner.run_dir(workspace, record.slug)
    program = folder / program_name(record, config)
    runner.write_file(program, language)
    given = inputs_of(record)[0]
    argv = from_root(fill(with_input(configured(config.run_language, "[run] language"), given), file=str(program),
                          threads=str(record.threads or 1)), workspace)
    ran = runner.run(argv, folder, config.timeout_seconds)
    result.language_seconds = ran.seconds
    if not ran.ok:
        result.runs = False
        failure = ran.classified("the program", f"at {sha[:12]}", config.timeout_seconds, config.memory_mb)
        if failure.kind in (Kind.ADDRESS_SPACE, Kind.MEMORY_CAP):
            failure = _with_larger_cap(result, failure, config, index, runner, argv, folder, ran.memory_total_mb)
        _runtime_failed(result, failure, config, index, argv, workspace, older)
        return result
    if not translation:  # a `reference:` report: compared with another implementation, not C
        result.runs = True
        return result
    runner.write_file(folder / "translation.c", translation)
    binary = folder / "translation"
    compiled = runner.run(fill(config.c_compile, file=str(folder / "translation.c"), out=str(binary)), folder,
                          config.timeout_seconds)
    if not compiled.ok:
        result.runs = False
        result.problem = "the C translation does not compile: " + compiled.failure(
            "the compiler", f"at {sha[:12]}", config.timeout_seconds, config.memory_mb)
        result.fixes.append(f"check {advice.place(index, 'run', 'c_compile')} (is the compiler it names installed?)")
        return result
    c_run = runner.run(fill(with_input(config.c_run, given), out=str(binary), file=str(folder / "translation.c")),
                       folder, config.timeout_seconds)
    result.c_seconds, result.runs = c_run.seconds, c_run.ok
    if not c_run.ok:
        result.problem = c_run.failure("the C translation", f"at {sha[:12]}", config.timeout_seconds,
                                       config.memory_mb)
        result.fixes.append(f"check {advice.place(index, 'run', 'c_run')}")
        return result
    _compare(result, config, index, ran, c_run)
    return result


def _compare(result: ReportCheck, config: RepoConfig, index, ran, c_run) -> None:
    mine, theirs = normalised(ran.stdout, config.run), normalised(c_run.stdout, config.run)
    result.equal = mine == theirs
    if not result.equal:
        result.problem = f"the program prints {mine[-200:]!r} but the C translation prints {theirs[-200:]!r}"
        rules = advice.normalize_rules(mine, theirs)
        if rules:
            written = list(config.run.normalize) + rules
            result.fixes.append("the outputs differ only in statistics lines: drop them before comparing; "
                                + advice.write_in(index, "run", ['output = "normalize"',
                                                                 f"normalize = {advice.toml_pairs(written)}"]))
        else:
            result.fixes.append("the two programs compute different results: fix the report's program or its C "
                                "translation (no output rule should hide that)")
    if config.run.metrics:
        result.metrics = metrics_of(ran.stdout, ran.stderr, config.run)
        missing = [name for name, _ in config.run.metrics if name not in result.metrics]
        if missing:
            result.problem = result.problem or f"metrics {', '.join(missing)} matched nothing the program printed"
            result.fixes.append(f"check {advice.place(index, 'run', 'metrics')}: {', '.join(missing)} found no "
                                "number in the program's output")
    else:
        found = advice.metric_patterns(ran.stdout)
        if found:
            result.notes.append("the runtime prints statistics; to record them with each sample, "
                                + advice.write_in(index, "run", [f"metrics = {advice.toml_table(found)}"]))


def _with_larger_cap(result: ReportCheck, failure: Failure, config: RepoConfig, index, runner, argv, folder,
                     host: int | None) -> Failure:
    """A memory failure run once more with all of the host's memory as the cap: when that runs, the fix is the
    cap; when it fails the same way, raising the cap changes nothing and the failure says so."""
    if not host or host <= config.memory_mb:
        return failure
    cap, runner.memory_mb = runner.memory_mb, host
    try:
        again = runner.run(argv, folder, config.timeout_seconds)
    finally:
        runner.memory_mb = cap
    if again.ok:
        result.fixes.append(f"it runs with a cap of {host} MB (this host's memory): the program needs more than "
                            f"{config.memory_mb} MB; " + advice.write_in(index, "verify", [f"memory_mb = {host}"]))
        return replace(failure, hint="")
    if again.classified("", "", config.timeout_seconds, host).kind in (Kind.ADDRESS_SPACE, Kind.MEMORY_CAP):
        return replace(failure, hint=(
            f"raising the cap to {host} MB, all of this host's memory, changed nothing: the cap is not the reason; "
            "look at what the runtime reserves (an mmap or calloc at start, the define that sizes its heap)"))
    return failure


def _runtime_failed(result: ReportCheck, failure: Failure, config: RepoConfig, index, argv: list[str], workspace,
                    older: bool) -> None:
    """The failure's fix, by what the evidence says: the key to change, the define to pass, or no fix at all."""
    language = advice.place(index, "run", "language")
    if failure.kind is Kind.PARSE_ERROR and older:
        result.notes.append("the runtime at this commit cannot read the report's program: the program is newer "
                            "than the runtime, not a configuration problem (verify measures it where it runs):\n"
                            + failure.text)
        return
    result.problem, result.failure = str(failure), failure
    if failure.kind in (Kind.RESERVATION, Kind.ADDRESS_SPACE):
        if not older:  # at an older commit the define may have had another name: _older_fixes decides
            _heap_fix(result, failure, config, index, workspace_files.sources(workspace))
        return
    if failure.kind is Kind.MISSING_PROGRAM:
        what = "the build" if config.build or config.build_script else "nothing (no [build] is set)"
        result.problem = failure.text  # the fix below says more than the failure's own hint
        shown = config.run_language[0] if config.run_language else argv[0]
        result.fixes.append(f"{shown} is not in the checkout after {what}: set {language} to the program the "
                            f"build makes{_programs_made(workspace)}, or {advice.place(index, 'build', 'command')} "
                            "to a build that makes it")
        return
    if failure.kind is Kind.UNKNOWN_OPTION and not older:
        result.fixes.append(f"the runtime does not take {failure.flag}: take it out of {language} (it ran "
                            f"{' '.join(argv)}), or use the option its --help names")
        return
    if failure.kind in (Kind.TIMEOUT, Kind.PROCESSES, Kind.MEMORY_CAP, Kind.ADDRESS_SPACE, Kind.UNKNOWN_OPTION):
        return  # the failure's own hint says what to change
    result.fixes.append(f"check {language}: it ran {' '.join(argv)}; the runtime's own message above says what it "
                        "expected")


def _programs_made(workspace) -> str:
    if not workspace_files.readable(workspace):
        return ""
    made = workspace_files.programs(workspace)[:5]
    return f" (it made: {', '.join(made)})" if made else " (the build changed nothing that runs: it made no program)"


def _heap_fix(result: ReportCheck, failure: Failure, config: RepoConfig, index, sources: dict[str, str]) -> None:
    """The define that sized the reservation the failure names, made a quarter of the memory cap in the build."""
    found = advice.heap_define(sources, failure.reserved_mb) if failure.reserved_mb is not None else None
    if found is None:
        return
    name, _, unit = found
    target = min(config.memory_mb, failure.reserved_mb or 0) // 4
    command = advice.with_define(config.build, name, max(1, (target << 20) // unit)) if config.build else None
    if command:
        result.fixes.append(f"{name} sizes that reservation; pass a smaller one in the build (a quarter of the "
                            f"{config.memory_mb} MB cap); "
                            + advice.write_in(index, "build", [f"command = {advice.toml_list(command)}"]))
    else:
        result.fixes.append(f"{name} sizes that reservation: build with -D{name}=<smaller> "
                            f"({advice.place(index, 'build', 'command')} or its script)")
