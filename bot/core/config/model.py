"""The whole `.perfbot.toml` as one typed model, `PerfbotFile`: it is the configuration every reader takes.
Defaults live in the section models only; a section left out reads as its defaults, and a `Declared` one
(`[digest]`, `[parity]`, `[notify]`) as off.

Another section or key is one field here (or in its section's module): its type says what it accepts, and the
errors, the line numbers, the JSON Schema, the reference and every reader (`config.verify.<key>`) follow. What
is derived from several keys is a property here (`measure`, `quiet`, `reading`, `build_script`).

The file is written by the same agents whose reports perfbot measures: it says how to build and run, never where
or how contained. Runners, the sandbox and where references come from are the operator's (instance.py); a key
of theirs here is refused with the place it belongs, and `OperatorConfig.narrow` lays them over the parsed file
(`config.operator`).
"""
from __future__ import annotations

from typing import Any

from pydantic import Field, PrivateAttr, ValidationError, model_validator

from bot.core.config.build import Build, BuildScript
from bot.core.config.errors import ConfigFileError, FieldError, first_error, load_toml
from bot.core.config.hosts import GpuSettings, NotifySettings
from bot.core.config.instance import INSTANCE_FILE, OperatorConfig
from bot.core.config.lines import key_lines, line_for
from bot.core.config.parity import ParityConfig
from bot.core.config.run import New, Reference, ReferenceName, ReferenceTable, Run, Verify, measure_problem
from bot.core.config.runners import Runner, Suite
from bot.core.config.schedules import DigestSchedule, GuardSettings, Milestone
from bot.core.config.values import Declared, Section
from bot.core.reports.records import ReadingOptions
from bot.core.verify.noise import Quiet


class PerfbotFile(Section):
    build: Build = Field(default_factory=Build)
    run: Run = Run()
    suite: Suite | None = None
    verify: Verify = Verify()
    milestones: tuple[Milestone, ...] = ()
    digest: DigestSchedule = Field(default_factory=DigestSchedule)
    references: dict[ReferenceName, ReferenceTable] = {}  # noqa: RUF012  (pydantic copies a field's default)
    parity: ParityConfig = Field(default_factory=ParityConfig)
    notify: NotifySettings = Field(default_factory=NotifySettings)
    guards: GuardSettings = GuardSettings()
    gpu: GpuSettings = Field(default_factory=GpuSettings)  # gpu.run None: no [gpu]; GPU reports swept like CPU ones
    new: New | None = None  # what `perfbot new` scaffolds; None: the format's own example
    # Never read from the file: the operator's runners, sandbox and ceilings (OperatorConfig.narrow), and the
    # text of [build] script, read from the same place as the file (bot/services/bench/bench_inputs.py).
    _operator: OperatorConfig = PrivateAttr(default_factory=OperatorConfig)
    _script_text: str | None = PrivateAttr(None)

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
        if "gpu" in self.model_fields_set and self.gpu.run is None:
            raise FieldError('a [gpu] needs run = [...]: the program forced onto the GPU, e.g. ["./bin/bend", '
                             '"run-cuda", "{file}"]', "gpu", "run")
        if "parity" in self.model_fields_set and not self.parity.files:
            raise FieldError('is required: list the files holding paired backends, e.g. ["runtime/gpu/*.h"]',
                             "parity", "files")
        for name in self.model_fields_set:
            section = getattr(self, name)
            if isinstance(section, Declared):
                section.written()
        return self

    @property
    def operator(self) -> OperatorConfig:
        """What the operator allows (runners, sandbox, reference sources); the defaults until narrowed."""
        return self._operator

    def runner_for(self, backend: str) -> Runner | None:
        return next((r for r in self._operator.runners if backend in r.labels), None)

    @property
    def reading(self) -> ReadingOptions:
        """What this file changes in how a report is read: every reader (sync, lint, dedup, verify, check)
        asks here, so a key that changes reading is added once."""
        return ReadingOptions(reference_factor=self.verify.reference_factor, language_tags=self.run.fence)

    @property
    def measure(self) -> str:
        """The repository's measure (a per-track table leaves "wall" for a track it does not name)."""
        return self.verify.measure if isinstance(self.verify.measure, str) else "wall"

    def measure_for(self, track: str | None, stated: str | None = None) -> str:
        """A report's measure: its own `measure:`, else its track's default, else the repository's."""
        measures = self.verify.measure
        by_track: dict[str, str] = {str(k): v for k, v in measures.items()} if isinstance(measures, dict) else {}
        return stated or by_track.get(track or "seq") or self.measure

    @property
    def quiet(self) -> Quiet:
        """core/verify/noise.py: when a host is too busy to time on."""
        return Quiet(self.verify.busy_load, self.verify.max_steal)

    def reference(self, name: str) -> Reference | None:
        table = self.references.get(name)
        return Reference(name=name, **table.model_dump(exclude_unset=True)) if table is not None else None

    @property
    def build_script(self) -> BuildScript | None:
        """[build] script, with its text once bench_inputs read it (None: not read, only parsed)."""
        return BuildScript(self.build.script, self._script_text) if self.build.script else None

    def with_verify(self, **values: Any) -> PerfbotFile:
        """The configuration with some [verify] values replaced: a command's samples=N, a report's measure."""
        return self.model_copy(update={"verify": self.verify.model_copy(update=values)})

    def with_script_text(self, text: str) -> PerfbotFile:
        copy = self.model_copy()
        copy._script_text = text
        return copy

    def under(self, operator: OperatorConfig, verify: Verify) -> PerfbotFile:
        """The file as the operator narrowed it (instance.py): their runners and sandbox, [verify] within ceilings."""
        copy = self.model_copy(update={"verify": verify})
        copy._operator = operator
        return copy


# Keys the repository cannot set, and where they belong: each would widen what a report's code may see or reach.
OPERATOR_KEYS = {
    "runners": "runners and their hosts are the operator's: [[runners]] in " + INSTANCE_FILE,
    "sandbox": f"the sandbox and its readable folders are the operator's: [sandbox] in {INSTANCE_FILE} (a "
               "repository may ask fewer processes with [verify] processes)",
    "limits": f"the ceilings are the operator's: [limits] in {INSTANCE_FILE} (a repository may ask less with "
              "[verify] memory_mb, timeout_seconds, budget_seconds and threads)",
    "llm": f"the LLM budgets are the operator's: [llm] in {INSTANCE_FILE}",
    "service": f"perfbot's settings are the operator's: [service] in {INSTANCE_FILE} or PERFBOT_* variables",
}
# `[references] allow` in the repository's file would name its own sources: the one key of a repository's
# section that is the operator's.
REFERENCE_SOURCES = f"where references come from is the operator's: [references] allow in {INSTANCE_FILE}"


def parse_repo_config(text: str) -> PerfbotFile:
    """The file checked against the model; the first mistake raised as `.perfbot.toml:LINE: key: problem`."""
    data = load_toml(text)
    for key, belongs in OPERATOR_KEYS.items():
        if key in data:
            raise ConfigFileError(key, line_for(key_lines(text), (key,)), f"not here: {belongs}")
    references = data.get("references")
    if isinstance(references, dict) and "allow" in references and not isinstance(references["allow"], dict):
        raise ConfigFileError("references.allow", line_for(key_lines(text), ("references", "allow")),
                              f"not here: {REFERENCE_SOURCES}")
    try:
        return PerfbotFile.model_validate(data)
    except ValidationError as exc:
        raise first_error(exc, PerfbotFile, key_lines(text)) from None


def json_schema() -> dict[str, Any]:
    """The file's JSON Schema, for editors that complete and check TOML (taplo, Even Better TOML)."""
    schema = PerfbotFile.model_json_schema()
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", "title": ".perfbot.toml", **schema}
