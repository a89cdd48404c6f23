"""`perfbot check`: does this configuration work on this repository? It builds one commit with the configured
runner, runs every report's program and C translation once, and says for each failure which key fixes it.

Nothing is measured here (one run is no benchmark): this is the loop a team runs after `perfbot init` and after
each change of `.perfbot.toml`, before `perfbot verify` spends its samples.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace

from bot.adapters.runners.base import BuildError
from bot.core.config import PerfbotFile, fill
from bot.core.config import check_advice as advice
from bot.core.config.lines import Path
from bot.core.reports.records import PerfIssue
from bot.core.verify.failures import Failure, Kind
from bot.core.verify.outputs import metrics_of, normalised
from bot.core.verify.sweep_checks import knob_problem
from bot.core.verify.verify_plan import configured, from_root, inputs_of, program_name, programs, with_input
from bot.errors import UserError
from bot.services.adopt import fixes
from bot.services.adopt import workspace as workspace_files
from bot.services.adopt.fixes import Introduced


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
    warnings: list[str] = field(default_factory=list)  # verify would refuse this report as configured

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


def check(config: PerfbotFile, index: dict[Path, int] | None, runner, sha: str, records: list[PerfIssue], *,
          older: bool = False, introduced: Introduced | None = None) -> CheckResult:
    """`older`: `sha` is not the default branch, so a failure there is answered with a `[build] script`."""
    configured = bool(config.build.argv) or config.build_script is not None
    with runner.exclusive():
        try:
            workspace = runner.prepare(sha)
        except BuildError as exc:
            failed = CheckResult(sha, False, configured, str(exc), fixes.build_fixes(config, index, str(exc), older))
            failed.script = fixes.script_of(failed.build_fixes)
            return failed
        result = CheckResult(sha, True, configured,
                             reports=[_report(config, index, runner, workspace, sha, r, older) for r in records])
        said = _help(config, runner, workspace) if older and any(r.failure for r in result.reports) else ""
    if older:
        result.build_fixes = fixes.older_fixes(config, index, result, workspace, introduced, said)
        result.script = fixes.script_of(result.build_fixes)
    return result


def _report(config: PerfbotFile, index, runner, workspace, sha: str, record: PerfIssue, older: bool
            ) -> ReportCheck:
    result = ReportCheck(record.slug)
    try:
        language, translation = programs(record, config)
    except UserError as exc:
        result.problem = str(exc)
        fence = advice.fence_fix(record, config.run.fence, index)
        if fence:
            result.fixes.append(fence)
        if config.run.language is None:
            result.fixes.append(f"set {advice.place(index, 'run', 'language')}: how the runtime runs a program "
                                'file, e.g. ["./runtime", "{file}"]')
        return result
    no_knob = knob_problem(record, config, advice.place(index, "run", "language"))
    if no_knob is not None:
        result.warnings.append(no_knob)
    folder = runner.run_dir(workspace, record.slug)
    program = folder / program_name(record, config)
    runner.write_file(program, language)
    given = inputs_of(record)[0]
    argv = from_root(fill(with_input(configured(config.run.language, "[run] language"), given), file=str(program),
                          threads=str(record.threads or 1)), workspace)
    ran = runner.run(argv, folder, config.verify.timeout_seconds)
    result.language_seconds = ran.seconds
    if not ran.ok:
        result.runs = False
        failure = ran.classified("the program", f"at {sha[:12]}", config.verify.timeout_seconds,
                                 config.verify.memory_mb)
        if failure.kind in (Kind.ADDRESS_SPACE, Kind.MEMORY_CAP):
            failure = _with_larger_cap(result, failure, config, index, runner, argv, folder, ran.memory_total_mb)
        _runtime_failed(result, failure, config, index, argv, workspace, older)
        return result
    if not translation:  # a `reference:` report: compared with another implementation, not C
        result.runs = True
        return result
    runner.write_file(folder / "translation.c", translation)
    binary = folder / "translation"
    compiled = runner.run(fill(config.run.c_compile, file=str(folder / "translation.c"), out=str(binary)), folder,
                          config.verify.timeout_seconds)
    if not compiled.ok:
        result.runs = False
        result.problem = "the C translation does not compile: " + compiled.failure(
            "the compiler", f"at {sha[:12]}", config.verify.timeout_seconds, config.verify.memory_mb)
        result.fixes.append(f"check {advice.place(index, 'run', 'c_compile')} (is the compiler it names installed?)")
        return result
    c_run = runner.run(fill(with_input(config.run.c_run, given), out=str(binary), file=str(folder / "translation.c")),
                       folder, config.verify.timeout_seconds)
    result.c_seconds, result.runs = c_run.seconds, c_run.ok
    if not c_run.ok:
        result.problem = c_run.failure("the C translation", f"at {sha[:12]}", config.verify.timeout_seconds,
                                       config.verify.memory_mb)
        result.fixes.append(f"check {advice.place(index, 'run', 'c_run')}")
        return result
    _compare(result, config, index, ran, c_run)
    return result


def _compare(result: ReportCheck, config: PerfbotFile, index, ran, c_run) -> None:
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


def _with_larger_cap(result: ReportCheck, failure: Failure, config: PerfbotFile, index, runner, argv, folder,
                     host: int | None) -> Failure:
    """A memory failure run once more with all of the host's memory as the cap: when that runs, the fix is the
    cap; when it fails the same way, raising the cap changes nothing and the failure says so."""
    if not host or host <= config.verify.memory_mb:
        return failure
    cap, runner.memory_mb = runner.memory_mb, host
    try:
        again = runner.run(argv, folder, config.verify.timeout_seconds)
    finally:
        runner.memory_mb = cap
    if again.ok:
        result.fixes.append(f"it runs with a cap of {host} MB (this host's memory): the program needs more than "
                            f"{config.verify.memory_mb} MB; "
                            + advice.write_in(index, "verify", [f"memory_mb = {host}"]))
        return replace(failure, hint="")
    if again.classified("", "", config.verify.timeout_seconds, host).kind in (Kind.ADDRESS_SPACE, Kind.MEMORY_CAP):
        return replace(failure, hint=(
            f"raising the cap to {host} MB, all of this host's memory, changed nothing: the cap is not the reason; "
            "look at what the runtime reserves (an mmap or calloc at start, the define that sizes its heap)"))
    return failure


def _help(config: PerfbotFile, runner, workspace) -> str:
    """What the runtime at this commit answers to `--help` and `-h`: the options it took then."""
    if not config.run.language:
        return ""
    binary = from_root([config.run.language[0]], workspace)[0]
    answers = [runner.run([binary, flag], workspace, min(10, config.verify.timeout_seconds))
               for flag in ("--help", "-h")]
    return "\n".join(ran.stdout + ran.stderr for ran in answers)


def _runtime_failed(result: ReportCheck, failure: Failure, config: PerfbotFile, index, argv: list[str], workspace,
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
            fixes.heap_fix(result, failure, config, index, workspace_files.sources(workspace))
        return
    if failure.kind is Kind.MISSING_PROGRAM:
        what = "the build" if config.build.argv or config.build_script else "nothing (no [build] is set)"
        result.problem = failure.text  # the fix below says more than the failure's own hint
        shown = config.run.language[0] if config.run.language else argv[0]
        result.fixes.append(f"{shown} is not in the checkout after {what}: set {language} to the program the "
                            f"build makes{_programs_made(workspace)}, or {advice.place(index, 'build', 'command')} "
                            "to a build that makes it")
        return
    if failure.kind is Kind.UNKNOWN_OPTION and not older:
        result.fixes.append(f"the runtime does not take {failure.flag}: take it out of {language} (it ran "
                            f"{' '.join(argv)}), or use the option its --help names")
        return
    if failure.kind is Kind.PARSE_ERROR:
        result.fixes.append(f"the runtime could not read the report's program: is it in this runtime's syntax, "
                            f"written where {language} passes it ({advice.place(index, 'run', 'program')}: the "
                            "file name and extension it wants)?")
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


