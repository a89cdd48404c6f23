"""`.perfbot.toml` keys that fit verification to a real runtime: program file, output rule, metrics, measure, references.

    [run]
    program = "main.hvm4"               # the file the report's program is written to (default: program.<fence tag>)
    output = "normalize"                # exact | normalize | last-line: how the two outputs must agree
    normalize = [["(?m)^- ITRS:.*\\n?", ""], ["(\\d+)n\\b", "\\1"]]  # regex, replacement; applied to both, in order
    metrics = {itrs = "- ITRS: ([0-9,]+)"}  # numbers the runtime prints, captured per sample
    [verify]
    measure = "wall"                    # wall | user | instructions | metric:NAME (a [run] metrics count), or
                                        # per track: {seq = "instructions", par = "wall"}; a report's `measure:` wins
    reference_factor = 1.0              # `reference:` reports: head passes within this factor of the reference
    threads = [1, 2, 4, 8, 12]          # par reports: the sweep of thread counts (default 1..the host's cores)
    flatten_gain = 0.5                  # par sweeps: a step gaining less than this of ideal is where it flattens
    [references.v1]                     # an implementation a report names with `reference: v1` (or v1@<ref>)
    repository = "../runtime-v1"        # a git path or URL (default: this repository)
    branch = "v1"                       # its ref (default: the repository's HEAD)
    build = ["make"]                    # its build (default: none)
    run = ["./bin/run", "{file}", "{input}"]
    program = "main.v1"                 # default: [run] program
    factor = 1.2                        # default: [verify] reference_factor

Parsed here so repo_config.py only routes these keys; every error names key and line like the rest.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from bot.core.config_checks import ConfigFileError, check, line_of
from bot.core.refnames import branch_name_problem
from bot.core.scaling import FLATTEN_GAIN, MAX_THREADS

OUTPUT_MODES = ("exact", "normalize", "last-line")
MEASURES = ("wall", "user", "instructions")
RUN_KEYS = ("program", "output", "normalize", "metrics")
VERIFY_KEYS = ("measure", "reference_factor", "threads", "flatten_gain")
REFERENCE_KEYS = ("repository", "branch", "build", "run", "program", "factor")
# A program file name reaches argv and a path: a plain name in the run folder, never a path or a dot file.
PROGRAM_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.+-]{0,63}")
_METRIC_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]{0,31}")


@dataclass(frozen=True)
class Reference:
    """Another implementation a report compares against: built from its own repository or branch."""

    name: str
    run: tuple[str, ...]
    repository: str | None = None  # None: the project's own repository
    branch: str | None = None  # None: that repository's HEAD
    build: tuple[str, ...] | None = None
    program: str | None = None
    factor: float | None = None


@dataclass(frozen=True)
class RunSettings:
    program: str | None = None
    output: str = "exact"
    normalize: tuple[tuple[str, str], ...] = ()
    metrics: tuple[tuple[str, str], ...] = ()
    measure: str = "wall"
    measure_by_track: tuple[tuple[str, str], ...] = ()  # (track, measure): the default of that track's reports
    reference_factor: float = 1.0
    references: tuple[Reference, ...] = field(default=())
    threads: tuple[int, ...] | None = None  # None: 1..the runner's cores (bot/core/scaling.py adds 1 and the claim)
    flatten_gain: float = FLATTEN_GAIN

    def reference(self, name: str) -> Reference | None:
        return next((r for r in self.references if r.name == name), None)

    def measure_for(self, track: str | None, stated: str | None = None) -> str:
        """A report's measure: its own `measure:`, else its track's default, else the repository's."""
        return stated or dict(self.measure_by_track).get(track or "seq") or self.measure


def parse_run_settings(run: dict, verify: dict, references, lines: list[str]) -> RunSettings:
    """The keys of RUN_KEYS and VERIFY_KEYS (already taken out of their tables) and the [references] section."""
    values: dict = {}
    if "program" in run:
        values["program"] = _program("run.program", run["program"], lines)
    if "output" in run:
        values["output"] = check("run.output", run["output"], OUTPUT_MODES, line_of(lines, "output"))
    if "normalize" in run:
        values["normalize"] = _substitutions(run["normalize"], line_of(lines, "normalize"))
    if values.get("output") == "normalize" and not values.get("normalize"):
        raise ConfigFileError("run.normalize", line_of(lines, "output"), 'output = "normalize" needs a normalize '
                              'list: normalize = [["regex", "replacement"], ...]')
    if values.get("normalize") and values.get("output", "exact") != "normalize":
        raise ConfigFileError("run.normalize", line_of(lines, "normalize"), 'applies only with output = "normalize"')
    if "metrics" in run:
        values["metrics"] = _metrics(run["metrics"], line_of(lines, "metrics"))
    if "measure" in verify:
        values.update(_measures(verify["measure"], dict(values.get("metrics", ())), line_of(lines, "measure")))
    if "reference_factor" in verify:
        values["reference_factor"] = check("verify.reference_factor", verify["reference_factor"], "positive",
                                           line_of(lines, "reference_factor"))
    if "threads" in verify:
        values["threads"] = _threads(verify["threads"], line_of(lines, "threads"))
    if "flatten_gain" in verify:
        values["flatten_gain"] = check("verify.flatten_gain", verify["flatten_gain"], "fraction",
                                       line_of(lines, "flatten_gain"))
    if references is not None:
        if not isinstance(references, dict) or not all(isinstance(t, dict) for t in references.values()):
            raise ConfigFileError("references", line_of(lines, "references"),
                                  "write each reference as a [references.NAME] table")
        values["references"] = tuple(_reference(name, table, lines) for name, table in references.items())
    return RunSettings(**values)


def measure_problem(value, metrics) -> str | None:
    """Why `value` is no measure (None when it is one): wall, user, instructions, or metric:NAME of a metric."""
    if isinstance(value, str) and value in MEASURES:
        return None
    if isinstance(value, str) and value.startswith("metric:"):
        name = value.removeprefix("metric:")
        return None if name in metrics else (f"'{name}' is not one of the [run] metrics "
                                             f"({', '.join(metrics) or 'none declared'})")
    return f"must be one of {', '.join(MEASURES)} or metric:NAME"


def _measures(value, metrics: dict, line: int) -> dict:
    tracks = value if isinstance(value, dict) else {None: value}
    for track, measure in tracks.items():
        key = "verify.measure" + (f".{track}" if track else "")
        if track not in (None, "seq", "par"):
            raise ConfigFileError(key, line, "per-track measures name seq and par only")
        problem = measure_problem(measure, metrics)
        if problem:
            raise ConfigFileError(key, line, problem)
    if isinstance(value, dict):
        return {"measure_by_track": tuple(sorted(value.items()))}
    return {"measure": value}


def _threads(value, line: int) -> tuple[int, ...]:
    if not isinstance(value, list) or not value or not all(
            isinstance(n, int) and not isinstance(n, bool) and 1 <= n <= MAX_THREADS for n in value):
        raise ConfigFileError("verify.threads", line, f"must be a list of thread counts from 1 to {MAX_THREADS}, "
                              "e.g. [1, 2, 4, 8, 12]")
    if len(set(value)) != len(value):
        raise ConfigFileError("verify.threads", line, "names a thread count twice")
    return tuple(sorted(value))


def _program(key: str, value, lines: list[str]) -> str:
    if not isinstance(value, str) or not PROGRAM_NAME.fullmatch(value):
        raise ConfigFileError(key, line_of(lines, "program"), f"{str(value)[:60]!r} must be a plain file name such as "
                              '"main.hvm4" (letters, digits, _.+-, no folders)')
    return value


def _regex(key: str, pattern, line: int) -> str:
    if not isinstance(pattern, str) or not pattern:
        raise ConfigFileError(key, line, "a pattern must be a non-empty string")
    try:
        re.compile(pattern)
    except re.error as exc:
        raise ConfigFileError(key, line, f"{pattern[:60]!r} is not a regular expression: {exc}") from None
    return pattern


def _substitutions(value, line: int) -> tuple[tuple[str, str], ...]:
    shape = 'must be a list of ["regex", "replacement"] pairs'
    if not isinstance(value, list) or not all(isinstance(p, list) and len(p) == 2 for p in value):
        raise ConfigFileError("run.normalize", line, shape)
    pairs = []
    for pattern, replacement in value:
        if not isinstance(replacement, str):
            raise ConfigFileError("run.normalize", line, shape)
        try:
            re.compile(_regex("run.normalize", pattern, line)).sub(replacement, "")
        except re.error as exc:  # a replacement naming a group the pattern lacks
            raise ConfigFileError("run.normalize", line, f"replacement {replacement[:40]!r}: {exc}") from None
        pairs.append((pattern, replacement))
    return tuple(pairs)


def _metrics(value, line: int) -> tuple[tuple[str, str], ...]:
    if not isinstance(value, dict) or not value:
        raise ConfigFileError("run.metrics", line, 'must be a table of name = "regex", e.g. {itrs = "ITRS: (\\\\d+)"}')
    out = []
    for name, pattern in value.items():
        if not _METRIC_NAME.fullmatch(name):
            raise ConfigFileError(f"run.metrics.{name}", line, "a metric name is a letter then letters, digits or _")
        if re.compile(_regex(f"run.metrics.{name}", pattern, line)).groups > 1:
            raise ConfigFileError(f"run.metrics.{name}", line, "capture the number with one group (or none: the "
                                  "whole match is the number)")
        out.append((name, pattern))
    return tuple(out)


def _reference(name: str, table: dict, lines: list[str]) -> Reference:
    line = line_of(lines, f"references.{name}")
    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,62}", name) or name == "runtime":
        raise ConfigFileError(f"references.{name}", line, "a reference name is letters, digits and _.- (and not "
                              "`runtime`, which means this project at another ref)")
    values: dict = {}
    for key, value in table.items():
        where = f"references.{name}.{key}"
        if key not in REFERENCE_KEYS:
            raise ConfigFileError(where, line, f"unknown key; known: {', '.join(REFERENCE_KEYS)}")
        if key in ("build", "run"):
            values[key] = check(where, value, "argv", line)
        elif key == "program":
            values[key] = _program(where, value, lines)
        elif key == "factor":
            values[key] = check(where, value, "positive", line)
        elif not isinstance(value, str) or not value or value.startswith("-"):
            raise ConfigFileError(where, line, "must be a string that does not start with '-'")
        elif key == "branch" and branch_name_problem(value) and not re.fullmatch(r"[0-9a-f]{7,40}", value):
            raise ConfigFileError(where, line, f"{value[:60]!r} is not a branch name or commit")
        else:
            values[key] = value
    if "run" not in values:
        raise ConfigFileError(f"references.{name}.run", line, 'is required: how to run a program on it, e.g. '
                              'run = ["./bin/old", "{file}"]')
    return Reference(name, **values)
