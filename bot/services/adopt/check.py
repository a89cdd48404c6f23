"""`perfbot check`: does this configuration work on this repository? It builds one commit with the configured
runner, runs every report's program and C translation once, and says for each failure which key fixes it.

Nothing is measured here (one run is no benchmark): this is the loop a team runs after `perfbot init` and after
each change of `.perfbot.toml`, before `perfbot verify` spends its samples.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from bot.adapters.runners.base import BuildError
from bot.core.config import RepoConfig, fill
from bot.core.config import check_advice as advice
from bot.core.config.lines import Path
from bot.core.reports.records import PerfIssue
from bot.core.verify.outputs import metrics_of, normalised
from bot.core.verify.sweep_checks import knob_problem
from bot.core.verify.verify_plan import configured, from_root, inputs_of, program_name, programs, with_input
from bot.errors import UserError


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
    warnings: list[str] = field(default_factory=list)  # verify would refuse this report as configured

    @property
    def ok(self) -> bool:
        return self.problem is None


@dataclass
class CheckResult:
    sha: str
    built: bool
    build_problem: str | None = None
    build_fixes: list[str] = field(default_factory=list)
    reports: list[ReportCheck] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.built and all(r.ok for r in self.reports)


def check(config: RepoConfig, index: dict[Path, int] | None, runner, sha: str, records: list[PerfIssue], *,
          older: bool = False) -> CheckResult:
    """`older`: `sha` is not the default branch, so a build failure is answered with a `[build] script`."""
    with runner.exclusive():
        try:
            workspace = runner.prepare(sha)
        except BuildError as exc:
            return CheckResult(sha, False, str(exc), _build_fixes(config, index, str(exc), older))
        return CheckResult(sha, True, reports=[_report(config, index, runner, workspace, sha, r) for r in records])


def _build_fixes(config: RepoConfig, index, failure: str, older: bool) -> list[str]:
    if config.build_script is not None:
        return [f"the build script {config.build_script.path} ({advice.place(index, 'build', 'script')}) fails "
                "at this commit: make it handle this revision too (it gets the checkout as $1, the commit as $2)"]
    if not older:
        return [f"set {advice.place(index, 'build', 'command')} to the command that builds the runtime in its "
                "checkout, e.g. [\"make\"]"]
    script = advice.build_script(config.build, failure).rstrip("\n").splitlines()
    return ["this commit does not build with the default branch's build: keep a script on the default branch "
            "that builds every revision (and drop [build] command: the script gets the checkout and the commit); "
            + advice.write_in(index, "build", ['script = ".perfbot/build.sh"']),
            "commit .perfbot/build.sh (chmod +x) reading:\n" + "\n".join(script)]


def _report(config: RepoConfig, index, runner, workspace, sha: str, record: PerfIssue) -> ReportCheck:
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
    no_knob = knob_problem(record, config, advice.place(index, "run", "language"))
    if no_knob is not None:
        result.warnings.append(no_knob)
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
        result.problem = ran.failure("the program", f"at {sha[:12]}", config.timeout_seconds, config.memory_mb)
        result.fixes.append(f"check {advice.place(index, 'run', 'language')}: it ran {' '.join(argv)}; the "
                            "runtime's own message above says what it expected")
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
