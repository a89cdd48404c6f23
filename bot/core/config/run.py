"""`[run]`, `[verify]`, `[references.NAME]` and `[new]`: how a report's programs run, compare and are judged.

    [run]
    language = ["./bin/bend", "run-c", "{file}", "--threads", "{threads}"]   # {file} {threads} {input} {out}
    program = "main.hvm4"               # the file the report's program is written to (default: program.<fence tag>)
    fence = ["tally"]                   # the runtime's own fence tag: ```tally blocks are the program
    output = "normalize"                # exact | normalize | last-line: how the two outputs must agree
    normalize = [["(?m)^- ITRS:.*\\n?", ""]]  # regex, replacement; applied to both, in order
    metrics = {itrs = "- ITRS: ([0-9,]+)"}  # numbers the runtime prints, captured per sample
    [verify]
    measure = "wall"                    # wall | user | instructions | metric:NAME (a [run] metrics count), or
                                        # per track: {seq = "instructions", par = "metric:span"}; par takes wall
                                        # or a span (the longest thread's work); a report's `measure:` wins
    claim_factor = 1.5                  # a claim outside the measured interval and this far off is flagged
    busy_load = 1.25                    # load per core at which a host is busy and a timed run noisy
    threads = [1, 2, 4, 8, 12]          # par reports: the sweep of thread counts (default 1..the host's cores)
    [references.v1]                     # an implementation a report names with `reference: v1` (or v1@<ref>)
    repository = "https://github.com/org/runtime-v1"  # a URL the operator allows (default: this repository)
    run = ["./bin/run", "{file}", "{input}"]
    [new]                               # `perfbot new`'s example: program, translation (its C twin), prints
    program = '''
    sum 1000
    '''
"""
from __future__ import annotations

import re
from collections.abc import Collection
from typing import Annotated, Literal

from pydantic import BeforeValidator, Field, StringConstraints, model_validator

from bot.core.config.errors import FieldError
from bot.core.config.values import NAME_RE, Argv, Count, Flag, Fraction, Positive, Section, choice
from bot.core.reports.codeblocks import FENCE_TAG, LANGUAGE_TAGS, RESERVED_TAGS
from bot.core.tracker.refnames import branch_name_problem

FLATTEN_GAIN = 0.5  # a sweep step adding less than half of the ideal gain is where the curve flattens
MAX_THREADS = 1024
# A program file name reaches argv and a path: a plain name in the run folder, never a path or a dot file.
PROGRAM_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.+-]{0,63}")
_METRIC_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]{0,31}")


def _program(value: object) -> str:
    if not isinstance(value, str) or not PROGRAM_NAME.fullmatch(value):
        raise ValueError(f"{str(value)[:60]!r} must be a plain file name such as \"main.hvm4\" (letters, digits, "
                         "_.+-, no folders)")
    return value


def _regex(pattern: object, *where: str) -> re.Pattern:
    if not isinstance(pattern, str) or not pattern:
        raise FieldError("a pattern must be a non-empty string", *where)
    try:
        return re.compile(pattern)
    except re.error as exc:
        raise FieldError(f"{pattern[:60]!r} is not a regular expression: {exc}", *where) from None


def _substitutions(value: object) -> tuple[tuple[str, str], ...]:
    shape = 'must be a list of ["regex", "replacement"] pairs'
    if not isinstance(value, (list, tuple)) or not all(isinstance(p, (list, tuple)) and len(p) == 2 for p in value):
        raise ValueError(shape)
    for pattern, replacement in value:
        if not isinstance(replacement, str):
            raise ValueError(shape)
        try:
            _regex(pattern).sub(replacement, "")
        except re.error as exc:  # a replacement naming a group the pattern lacks
            raise ValueError(f"replacement {replacement[:40]!r}: {exc}") from None
    return tuple((pattern, replacement) for pattern, replacement in value)


def _metrics(value: object) -> tuple[tuple[str, str], ...]:
    if not isinstance(value, dict) or not value:
        raise ValueError('must be a table of name = "regex", e.g. {itrs = "ITRS: (\\\\d+)"}')
    for name, pattern in value.items():
        if not _METRIC_NAME.fullmatch(name):
            raise FieldError("a metric name is a letter then letters, digits or _", name)
        if _regex(pattern, name).groups > 1:
            raise FieldError("capture the number with one group (or none: the whole match is the number)", name)
    return tuple(value.items())


def _threads(value: object) -> tuple[int, ...]:
    if not isinstance(value, (list, tuple)) or not value or not all(
            isinstance(n, int) and not isinstance(n, bool) and 1 <= n <= MAX_THREADS for n in value):
        raise ValueError(f"must be a list of thread counts from 1 to {MAX_THREADS}, e.g. [1, 2, 4, 8, 12]")
    if len(set(value)) != len(value):
        raise ValueError("names a thread count twice")
    return tuple(sorted(value))


def _plain(value: object) -> str:
    if not isinstance(value, str) or not value or value.startswith("-"):
        raise ValueError("must be a string that does not start with '-'")
    return value


# A URL; which ones are fetched is the operator's [references] allow (a file:// URL only under a folder the
# operator names there). A path would read the bot host's folders.
_SOURCE = re.compile(r"(?:https?|ssh|git|file)://[\x21-\x7e]+|[A-Za-z0-9_.-]+@[A-Za-z0-9_.-]+:[\x21-\x7e]+")


def _source(value: object) -> str:
    value = _plain(value)
    if not _SOURCE.fullmatch(value) or ".." in value.split("/"):
        raise ValueError(f"{value[:60]!r}: a reference comes from this repository (leave repository out and name a "
                         "branch) or from a URL the operator allows ([references] allow in instance/perfbot.toml); "
                         "never a path")
    return value


def _ref(value: object) -> str:
    value = _plain(value)
    if branch_name_problem(value) and not re.fullmatch(r"[0-9a-f]{7,40}", value):
        raise ValueError(f"{value[:60]!r} is not a branch name or commit")
    return value


def _reference_name(value: object) -> str:
    if not isinstance(value, str) or not NAME_RE.fullmatch(value) or value == "runtime":
        raise ValueError("a reference name is letters, digits and _.- (and not `runtime`, which means this project "
                         "at another ref)")
    return value


def _fence(value: object) -> tuple[str, ...]:
    """The runtime's own fence tags: a report's ```tally block is then its program, as ```bend is everywhere."""
    if not isinstance(value, (list, tuple)) or not value or not all(isinstance(tag, str) for tag in value):
        raise ValueError('must be a list of fence tags, e.g. ["tally"]')
    for tag in value:
        if not FENCE_TAG.fullmatch(tag):
            raise ValueError(f"{tag[:40]!r} is not a fence tag: one lower-case word (letters, digits, _+-; at most "
                             f"32), written as the report writes it after ```")
        if tag in RESERVED_TAGS:
            raise ValueError(f"`{tag}` already fences the C, CUDA or Metal side of a report "
                             f"({', '.join(RESERVED_TAGS)}); name the language's own tag")
    if len(set(value)) != len(value):
        raise ValueError("names a tag twice")
    return tuple(value)


Program = Annotated[str, BeforeValidator(_program)]
FenceTags = Annotated[tuple[str, ...], BeforeValidator(_fence)]
OutputRule = Annotated[Literal["exact", "normalize", "last-line"],
                       BeforeValidator(choice("exact", "normalize", "last-line"))]
MEASURES = ("wall", "user", "instructions")


def measure_problem(value: object, metrics: Collection[str]) -> str | None:
    """Why `value` is no measure (None when it is one): wall, user, instructions, or metric:NAME of a metric."""
    if isinstance(value, str) and value in MEASURES:
        return None
    if isinstance(value, str) and value.startswith("metric:"):
        name = value.removeprefix("metric:")
        return None if name in metrics else (f"'{name}' is not one of the [run] metrics "
                                             f"({', '.join(metrics) or 'none declared'})")
    return f"must be one of {', '.join(MEASURES)} or metric:NAME"


def par_measure_problem(measure: str) -> str | None:
    """Why a speedup cannot be made of `measure` (None when it can): a speedup compares how long the work takes on
    one thread and on N, which wall time shows and a span the runtime prints (metric:NAME, the longest thread's
    share of the work) shows without noise; user time and instructions add up over threads, so N threads never
    show less of them."""
    if measure == "wall" or measure.startswith("metric:"):
        return None
    return (f'"{measure}" adds up over threads, so no speedup can be made of it: par reports are measured in "wall" '
            'time or in a span the runtime prints ("metric:NAME", the longest thread\'s work)')


def _measure(value: object) -> object:  # the TOML value, checked; pydantic types it
    """A measure, or one per track; metric:NAME is checked against [run] metrics with the whole file."""
    tracks = value if isinstance(value, dict) else {"": value}
    for track, measure in tracks.items():
        if track not in ("", "seq", "par"):
            raise ValueError("per-track measures name seq and par only")
        if track == "par" and isinstance(measure, str) and par_measure_problem(measure):
            raise ValueError(par_measure_problem(measure))
        if not isinstance(measure, str) or not (measure in MEASURES or (_METRIC_NAME.fullmatch(
                measure.removeprefix("metric:")) and measure.startswith("metric:"))):
            raise ValueError(f"must be one of {', '.join(MEASURES)} or metric:NAME")
    return value


OneMeasure = Literal["wall", "user", "instructions"] | Annotated[
    str, StringConstraints(pattern=r"^metric:[A-Za-z][A-Za-z0-9_]{0,31}$")]
Measure = Annotated[OneMeasure | dict[Literal["seq", "par"], OneMeasure], BeforeValidator(_measure)]
Substitutions = Annotated[tuple[tuple[str, str], ...], BeforeValidator(_substitutions)]
Metrics = Annotated[tuple[tuple[str, str], ...], BeforeValidator(_metrics)]
Threads = Annotated[tuple[int, ...], BeforeValidator(_threads)]
ReferenceName = Annotated[str, BeforeValidator(_reference_name)]


class Run(Section):
    language: Argv | None = Field(None, description="how the language runs a program file")
    c_compile: Argv = Field(("gcc", "-O2", "-o", "{out}", "{file}"),
                            description="how a C translation is compiled ({file} the source, {out} the binary)")
    c_run: Argv = Field(("{out}",), description="how the compiled translation runs")
    program: Program | None = Field(None, description="the program's file name (default: program.<fence tag>)")
    fence: FenceTags = Field((), description="the runtime's own tags for a report's program fence, beside the "
                                             f"built-in {', '.join(LANGUAGE_TAGS)} (C, CUDA and Metal tags are "
                                             "taken); the first is the one perfbot writes")
    output: OutputRule = Field("exact",
                               description="how the two outputs must agree: exact, normalize (after [run] normalize) "
                                            "or last-line")
    normalize: Substitutions = Field((),
                                     description='[regex, replacement] pairs applied to both outputs in order, with '
                                                  'output = "normalize"')
    metrics: Metrics = Field((), description="name = regex: numbers the runtime prints, captured with each sample")

    @model_validator(mode="after")
    def _normalize_goes_with_its_rule(self) -> Run:
        if self.output == "normalize" and not self.normalize:
            raise FieldError('output = "normalize" needs a normalize list: normalize = [["regex", "replacement"], '
                             "...]", "normalize", line_of=("output",))
        if self.normalize and self.output != "normalize":
            raise FieldError('applies only with output = "normalize"', "normalize")
        return self


class Verify(Section):
    seq_threshold: Positive = Field(2.0,
                                    description="a seq report holds while the language is more than this many times "
                                                 "slower than C")
    par_efficiency: Fraction = Field(0.75, description="a par speedup below this fraction of ideal is far from ideal")
    min_samples: Count = Field(5, description="pairs of runs measured before a verdict may be decided")
    max_samples: Count = Field(30, description="pairs of runs at most")
    budget_seconds: Count = Field(900, description="the time one verification may take")
    timeout_seconds: Count = Field(120, description="the time one run may take")
    memory_mb: Count = Field(4096, description="the memory of one run's whole process tree (at most the operator's "
                                               "ceiling)")
    processes: Count | None = Field(None, description="processes and threads of one run's tree, fewer than the "
                                                      "operator's [sandbox] processes")
    fixes: Flag = Field(True, description="verify a fix of this repository whenever its head moves")
    on_open: Flag = Field(False, description="measure each new report's claim on the default branch")
    measure: Measure = Field("wall",
                             description="what the verdict's ratio is made of: wall, user (CPU) time, instructions "
                                         "counted or metric:NAME (a count the runtime prints); or one per track, "
                                         "{seq = ..., par = ...}, where par is wall or a span the runtime prints "
                                         "(metric:NAME, the longest thread's work)")
    claim_factor: Positive = Field(1.5, description="a claim outside the measured interval and this many times off "
                                                    "the measured ratio is flagged")
    busy_load: Positive = Field(1.25, description="a host whose load per core reaches this during timed runs is "
                                                  "busy, and the run noisy (a single-threaded benchmark adds about "
                                                  "1 itself)")
    max_steal: Fraction = Field(0.05, description="a host whose hypervisor takes more of its CPU time than this "
                                                  "is busy")
    noisy_retries: Count = Field(2, description="a noisy run's verdict is posted at once; the service then "
                                                "measures it again this many times, 10 minutes apart, each "
                                                "measurement replacing the verdict")
    reference_factor: Positive = Field(1.0, description="`reference:` reports pass within this factor of the reference")
    threads: Threads | None = Field(None, description="par sweeps' thread counts (default 1..the host's cores)")
    flatten_gain: Fraction = Field(FLATTEN_GAIN,
                                   description="par sweeps: a step gaining less than this of ideal is where it "
                                                "flattens")

    @model_validator(mode="after")
    def _samples_in_order(self) -> Verify:
        if self.min_samples > self.max_samples:
            raise FieldError("is larger than max_samples", "min_samples")
        return self


class ReferenceTable(Section):
    """Another implementation a report compares against: built from its own repository or branch."""

    run: Argv = Field(description='how to run a program on it, e.g. run = ["./bin/old", "{file}"]')
    repository: Annotated[str, BeforeValidator(_source)] | None = None  # None: the project's own repository
    branch: Annotated[str, BeforeValidator(_ref)] | None = None  # None: that repository's HEAD
    build: Argv | None = None
    program: Program | None = None
    factor: Positive | None = None


class Reference(ReferenceTable):
    name: str


def _snippet(value: object) -> str:
    if not isinstance(value, str) or not value.strip() or len(value) > 8000:
        raise ValueError("must be the program's text, e.g. a multi-line string '''...''' (at most 8000 characters)")
    if "```" in value:
        raise ValueError("must not hold ``` (it would end the report's code fence)")
    return value.strip("\n")


def _one_line(value: object) -> str:
    if not isinstance(value, str) or not value.strip() or len(value) > 200 or not value.isprintable():
        raise ValueError("must be one line, what both programs print")
    return value.strip()


class New(Section):
    """What `perfbot new` writes into a report, so that a fresh scaffold runs on this runtime as it is."""

    program: Annotated[str, BeforeValidator(_snippet)] = Field(
        description="a program this runtime runs, the starting point of each new report")
    translation: Annotated[str, BeforeValidator(_snippet)] = Field(description="its 1-to-1 C translation")
    prints: Annotated[str, BeforeValidator(_one_line)] = Field(description="what both print")
