"""A verification's plan, decided without I/O: the report's programs and their file name, the inputs, what the
program is compared with, and argument templates filled so that no text a report carries can change how many
arguments a command gets (an input's words become arguments of their own, never a shell string)."""
from __future__ import annotations

import hashlib
import re
from typing import Protocol

from bot.core.config import PROGRAM_NAME, PerfbotFile, Reference, measure_problem, par_measure_problem
from bot.core.reports.records import PerfIssue
from bot.errors import Invalid, NotConfigured, NotFound

_SAFE_TAG = re.compile(r"[a-z0-9_+-]{1,16}")


def configured(argv: tuple[str, ...] | None, key: str) -> tuple[str, ...]:
    """A command the run needs from .perfbot.toml; a refusal naming the key when the file lacks it."""
    if argv is None:
        raise NotConfigured(f"{key} is not set in .perfbot.toml, and this run needs it", key=key)
    return argv


def with_input(template: tuple[str, ...], given: str | None) -> tuple[str, ...]:
    """`{input}` filled: an argument that is exactly `{input}` becomes the input's words (none without an
    input); inside a longer argument it is the input's text. A template without the slot gets the words appended,
    so the C side (`c_run = ["{out}"]`) receives the same arguments as the program."""
    words = given.split() if given else []
    if not any("{input}" in arg for arg in template):
        return (*template, *words)
    out: list[str] = []
    for arg in template:
        out.extend(words if arg == "{input}" else [arg.replace("{input}", given or "")])
    return tuple(out)


def programs(record: PerfIssue, config: PerfbotFile) -> tuple[str, str]:
    """The report's program and C translation ("" when it compares with a reference), or a refusal that says
    what a plan for it lacks."""
    if record.track == "par" and (record.threads or 1) < 2:
        raise Invalid("a par report without a thread count above 1", "set `threads:`", at=record.slug, key="threads")
    if record.track == "par" and record.reference:
        raise Invalid("a par report compares thread counts, a `reference:` compares implementations",
                      "make it `track: seq` or drop the reference", at=record.slug, key="reference")
    problem = par_measure_problem(config.measure) if record.track == "par" else None
    if problem:
        fix = ("change the report's `measure:`" if record.measure else "keep it for seq reports only with "
               f'[verify] measure = {{seq = "{config.measure}", par = "wall"}} in .perfbot.toml')
        raise Invalid(f"measure {problem}", fix, at=record.slug)
    language = next((b.code for b in record.code_blocks if b.lang == "language"), None)
    translation = next((b.code for b in record.code_blocks if b.lang == "c"), None)
    if record.reference and translation is None:
        translation = ""
    if language is None or translation is None or config.run.language is None:
        missing = "the program" if language is None else "the C translation" if translation is None else \
            "[run] language in .perfbot.toml"
        raise Invalid(f"cannot verify: {missing} is missing", at=record.slug)
    return language, translation


def program_name(record: PerfIssue, config: PerfbotFile) -> str:
    """`[run] program`, else program.<the fence's tag> (program.bend for ```bend), else program.bend."""
    if config.run.program:
        return config.run.program
    tag = next((b.tag for b in record.code_blocks if b.lang == "language"), "")
    name = f"program.{tag}" if _SAFE_TAG.fullmatch(tag or "") else "program.bend"
    return name if PROGRAM_NAME.fullmatch(name) else "program.bend"


def reference_of(record: PerfIssue, config: PerfbotFile) -> Reference | None:
    """What `reference:` names: `runtime@<ref>` is this project at ref, run as [run] language runs it;
    `NAME[@<ref>]` is a [references.NAME] table (at ref instead of its branch). None: the C translation."""
    if not record.reference:
        return None
    name, _, ref = record.reference.partition("@")
    if name == "runtime":
        if not ref:
            raise Invalid("`reference: runtime` needs the ref to compare with", "e.g. `reference: runtime@v1`",
                          at=record.slug, key="reference")
        return Reference.model_construct(name="runtime", run=config.run.language or (), branch=ref,
                                         build=config.build.argv)
    table = config.reference(name)
    if table is None:
        known = ", ".join(config.references) or "none"
        raise NotFound(f"{record.slug} names `reference: {record.reference}` but .perfbot.toml has no "
                       f"[references.{name}] (known: {known})", "add one, or write `reference: runtime@<ref>`",
                       name=f"references.{name}")
    return table.model_copy(update={"branch": ref}) if ref else table


def with_measure(config: PerfbotFile, record: PerfIssue) -> PerfbotFile:
    """The configuration as this report is measured: its own `measure:`, else its track's, else the repository's."""
    measure = config.measure_for(record.track, record.measure)
    problem = measure_problem(measure, dict(config.run.metrics)) if record.measure else None
    if problem:  # .perfbot.toml checked its own measures; a report's names a metric the runtime may not print
        raise Invalid(f"cannot verify: `measure: {measure}`: {problem}", at=record.slug)
    if measure == config.measure:
        return config
    return config.with_verify(measure=measure)


def claim_fingerprint(record: PerfIssue) -> str:
    """What a claim check measures: the program, its C translation, the inputs and the reference. A change to
    any of them is a new claim (measured again with `on_open`); an edit of the prose is not."""
    code = [(b.lang, b.code) for b in record.code_blocks if b.lang in ("language", "c")]
    return hashlib.sha256(repr((code, record.inputs, record.reference)).encode()).hexdigest()[:16]


def inputs_of(record: PerfIssue) -> tuple[str | None, ...]:
    return record.inputs or (None,)


class Folder(Protocol):
    """A workspace on any host: a local or a remote path, joined with `/`."""

    def __truediv__(self, name: str) -> object: ...


def from_root(argv: list[str], workspace: Folder) -> list[str]:
    return [str(workspace / arg[2:]) if arg.startswith("./") else arg for arg in argv]
