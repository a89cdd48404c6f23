"""The whole `.perfbot.toml` as one typed model (`PerfbotFile`), and the flat view the rest of perfbot reads
(`RepoConfig`). Defaults live in the section models only; a missing section turns its feature off.

Another section or key is one field here (or in its section's module): its type says what it accepts, and the
errors, the line numbers, the JSON Schema and the reference follow. A `[verify]` key the rest of perfbot reads
as `config.<key>` is also a field of RepoConfig, filled in `repo_config()`.

The file is written by the same agents whose reports perfbot measures: it says how to build and run, never where
or how contained. Runners, the sandbox and where references come from are the operator's (instance.py); a key
of theirs here is refused with the place it belongs.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from pydantic import ValidationError, model_validator

from bot.core.config.build import Build, BuildScript
from bot.core.config.errors import ConfigFileError, FieldError, first_error, load_toml
from bot.core.config.hosts import GpuSettings, NotifySettings, SandboxSettings
from bot.core.config.lines import key_lines, line_for
from bot.core.config.parity import ParityConfig
from bot.core.config.run import New, Reference, ReferenceName, ReferenceTable, Run, Verify, measure_problem
from bot.core.config.runners import Runner, Suite
from bot.core.config.schedules import DigestSchedule, GuardSettings, Milestone
from bot.core.config.values import Section
from bot.core.reports.records import ReadingOptions
from bot.core.verify.noise import Quiet


class PerfbotFile(Section):
    build: Build | None = None
    run: Run = Run()
    suite: Suite | None = None
    verify: Verify = Verify()
    milestones: tuple[Milestone, ...] = ()
    digest: DigestSchedule | None = None
    references: dict[ReferenceName, ReferenceTable] = {}  # noqa: RUF012  (pydantic copies a field's default)
    parity: ParityConfig | None = None
    notify: NotifySettings | None = None
    guards: GuardSettings = GuardSettings()
    gpu: GpuSettings | None = None
    new: New | None = None

    @model_validator(mode="after")
    def _across_sections(self) -> PerfbotFile:
        measures = self.verify.measure if isinstance(self.verify.measure, dict) else {"": self.verify.measure}
        for measure in measures.values():
            problem = measure_problem(measure, dict(self.run.metrics))
            if problem:
                raise FieldError(problem, "verify", "measure")
        seen: set[str] = set()
        for index, milestone in enumerate(self.milestones):
            if milestone.name in seen:
                raise FieldError(f"two milestones are named {milestone.name!r}", "milestones", index, "name")
            seen.add(milestone.name)
        if self.gpu is not None and self.gpu.run is None:
            raise FieldError('a [gpu] needs run = [...]: the program forced onto the GPU, e.g. ["./bin/bend", '
                             '"run-cuda", "{file}"]', "gpu", "run")
        if self.parity is not None and not self.parity.files:
            raise FieldError('is required: list the files holding paired backends, e.g. ["runtime/gpu/*.h"]',
                             "parity", "files")
        return self


_RUN, _VERIFY = Run(), Verify()
LOCAL_RUNNER = Runner(name="local", kind="local", labels=("c",))
INSTANCE_FILE = "instance/perfbot.toml"
# Keys the repository cannot set, and where they belong: each would widen what a report's code may see or reach.
OPERATOR_KEYS = {
    "runners": "runners and their hosts are the operator's: [[runners]] in " + INSTANCE_FILE,
    "sandbox": f"the sandbox and its readable folders are the operator's: [sandbox] in {INSTANCE_FILE} (a "
               "repository may ask fewer processes with [verify] processes)",
}


@dataclass(frozen=True)
class RunSettings:
    """What running a report's programs takes: [run]'s program rules, [verify]'s measure, the references."""

    program: str | None = _RUN.program
    fence: tuple[str, ...] = _RUN.fence
    output: str = _RUN.output
    normalize: tuple[tuple[str, str], ...] = _RUN.normalize
    metrics: tuple[tuple[str, str], ...] = _RUN.metrics
    measure: str = "wall"
    measure_by_track: tuple[tuple[str, str], ...] = ()  # (track, measure): the default of that track's reports
    reference_factor: float = _VERIFY.reference_factor
    references: tuple[Reference, ...] = ()
    threads: tuple[int, ...] | None = _VERIFY.threads  # None: 1..the runner's cores (bot/core/verify/scaling.py)
    flatten_gain: float = _VERIFY.flatten_gain

    def reference(self, name: str) -> Reference | None:
        return next((r for r in self.references if r.name == name), None)

    def measure_for(self, track: str | None, stated: str | None = None) -> str:
        """A report's measure: its own `measure:`, else its track's default, else the repository's."""
        return stated or dict(self.measure_by_track).get(track or "seq") or self.measure


@dataclass(frozen=True)
class RepoConfig:
    build: tuple[str, ...] | None = None
    build_script: BuildScript | None = None
    run_language: tuple[str, ...] | None = _RUN.language
    c_compile: tuple[str, ...] = _RUN.c_compile
    c_run: tuple[str, ...] = _RUN.c_run
    suite: Suite | None = None
    seq_threshold: float = _VERIFY.seq_threshold
    par_efficiency: float = _VERIFY.par_efficiency
    claim_factor: float = _VERIFY.claim_factor  # core/verify/claim_size.py
    # core/verify/noise.py: when a host is too busy to time on
    quiet: Quiet = Quiet(_VERIFY.busy_load, _VERIFY.max_steal)
    noisy_retries: int = _VERIFY.noisy_retries
    min_samples: int = _VERIFY.min_samples
    max_samples: int = _VERIFY.max_samples
    budget_seconds: int = _VERIFY.budget_seconds
    timeout_seconds: int = _VERIFY.timeout_seconds
    memory_mb: int = _VERIFY.memory_mb
    processes: int | None = None  # [verify] processes: fewer than the operator's [sandbox] processes
    verify_fixes: bool = _VERIFY.fixes
    verify_on_open: bool = _VERIFY.on_open
    # The operator's, laid over the file by OperatorConfig.narrow (instance.py); never read from .perfbot.toml.
    runners: tuple[Runner, ...] = field(default=(LOCAL_RUNNER,))
    runners_named: bool = False  # [[runners]] written: the service may then use a local runner it names
    reference_sources: tuple[str, ...] = ()  # URL prefixes a [references.NAME] repository may name
    milestones: tuple[Milestone, ...] = ()
    digest: DigestSchedule = DigestSchedule()
    run: RunSettings = RunSettings()
    parity: ParityConfig = ParityConfig()
    notify: NotifySettings = NotifySettings()
    guards: GuardSettings = GuardSettings()
    gpu: GpuSettings = GpuSettings()
    sandbox: SandboxSettings = SandboxSettings()
    new: New | None = None  # what `perfbot new` scaffolds; None: the format's own example

    def runner_for(self, backend: str) -> Runner | None:
        return next((r for r in self.runners if backend in r.labels), None)

    @property
    def reading(self) -> ReadingOptions:
        """What this file changes in how a report is read: every reader (sync, lint, dedup, verify, check)
        asks here, so a key that changes reading is added once."""
        return ReadingOptions(reference_factor=self.run.reference_factor, language_tags=self.run.fence)


def parse_repo_config(text: str) -> RepoConfig:
    """The file checked against the model; the first mistake raised as `.perfbot.toml:LINE: key: problem`."""
    data = load_toml(text)
    for key, belongs in OPERATOR_KEYS.items():
        if key in data:
            raise ConfigFileError(key, line_for(key_lines(text), (key,)), f"not here: {belongs}")
    try:
        return repo_config(PerfbotFile.model_validate(data))
    except ValidationError as exc:
        raise first_error(exc, PerfbotFile, key_lines(text)) from None


def repo_config(file: PerfbotFile) -> RepoConfig:
    run, verify = file.run, file.verify
    build = file.build or Build()
    return RepoConfig(
        build=build.argv, build_script=BuildScript(build.script) if build.script else None,
        run_language=run.language, c_compile=run.c_compile, c_run=run.c_run, suite=file.suite,
        seq_threshold=verify.seq_threshold, par_efficiency=verify.par_efficiency, claim_factor=verify.claim_factor,
        quiet=Quiet(verify.busy_load, verify.max_steal), noisy_retries=verify.noisy_retries,
        min_samples=verify.min_samples,
        max_samples=verify.max_samples, budget_seconds=verify.budget_seconds, timeout_seconds=verify.timeout_seconds,
        memory_mb=verify.memory_mb, processes=verify.processes, verify_fixes=verify.fixes,
        verify_on_open=verify.on_open, milestones=file.milestones,
        digest=file.digest.written() if file.digest else DigestSchedule(),
        run=RunSettings(program=run.program, fence=run.fence, output=run.output, normalize=run.normalize,
                        metrics=run.metrics,
                        measure=verify.measure if isinstance(verify.measure, str) else "wall",
                        measure_by_track=tuple(sorted(verify.measure.items())) if isinstance(verify.measure, dict)
                        else (), reference_factor=verify.reference_factor,
                        references=tuple(Reference(name=name, **table.model_dump(exclude_unset=True))
                                         for name, table in file.references.items()),
                        threads=verify.threads, flatten_gain=verify.flatten_gain),
        parity=file.parity.written() if file.parity else ParityConfig(),
        notify=file.notify.written() if file.notify else NotifySettings(),
        guards=file.guards, gpu=file.gpu or GpuSettings(), new=file.new)


def json_schema() -> dict:
    """The file's JSON Schema, for editors that complete and check TOML (taplo, Even Better TOML)."""
    schema = PerfbotFile.model_json_schema()
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", "title": ".perfbot.toml", **schema}
