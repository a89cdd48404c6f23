"""The `actions` runner: the bench plan as workflow inputs, and the samples artifact read back without trusting it.

Nothing here runs a program: deploy/github/perfbot_bench.py runs the plan on a self-hosted runner and uploads
`perfbot-samples-<run>` holding one JSON file. The zip comes from a machine that built untrusted code, so it
is read in memory, never extracted: every member is checked (name, type, size, compression ratio) before
one byte is decompressed, and the JSON is checked value by value before perfbot's statistics see it.
"""
from __future__ import annotations

import io
import json
import math
import stat
import zipfile

from bot.core.config import PerfbotFile, Runner
from bot.core.reports.records import PerfIssue
from bot.core.verify.bench_run import BenchRun
from bot.core.verify.verify_plan import programs
from bot.errors import Invalid

SAMPLES_FILE = "perfbot-samples.json"
MAX_ZIP_BYTES = 10 * 1024 * 1024
MAX_JSON_BYTES = 2 * 1024 * 1024
MAX_RATIO = 100  # JSON of numbers compresses maybe 5-10x; far more is a bomb
MAX_INPUT_CHARS = 65_000  # GitHub caps a dispatch's inputs at 65,535 characters
KINDS = ("language_seconds", "c_seconds"), ("one_thread_seconds", "n_threads_seconds")


class ArtifactError(Invalid):
    """The samples artifact is refused: what is wrong with it, for the run's comment."""


def artifact_name(run_id: int) -> str:
    return f"perfbot-samples-{run_id}"


def run_title(run_id: int) -> str:
    """The workflow's run-name for a bench run: how perfbot recognises its own workflow runs."""
    return f"perfbot bench run {run_id}"


def dispatch_inputs(run: BenchRun, record: PerfIssue, config: PerfbotFile, runner: Runner) -> dict[str, str]:
    """The workflow_dispatch inputs: strings, as GitHub requires; the plan is what verify.py would follow."""
    language, translation = programs(record, config)
    _refuse_what_the_workflow_cannot_do(record, config, runner)
    plan = {"run": run.id, "slug": record.slug, "base": run.base if run.compares_base else None,
            "head": run.head, "track": record.track, "threads": record.threads or 1, "program": language,
            "translation": translation, "build": list(config.build.argv or []) or None,
            # The default branch's build script travels in the plan: the measured commits may predate it.
            "build_script": {"name": config.build_script.name, "text": config.build_script.text}
            if config.build_script else None,
            "language": list(config.run.language or ()), "c_compile": list(config.run.c_compile),
            "c_run": list(config.run.c_run),
            "samples": config.verify.max_samples, "timeout_seconds": config.verify.timeout_seconds,
            "budget_seconds": config.verify.budget_seconds, "memory_mb": config.verify.memory_mb}
    inputs = {"run": str(run.id), "plan": json.dumps(plan, separators=(",", ":")),
              "runs_on": json.dumps(list(runner.runs_on))}
    if sum(len(v) for v in inputs.values()) > MAX_INPUT_CHARS:
        raise Invalid(f"cannot verify {record.slug} on {runner.name}: the report's programs (and the build "
                      f"script) are too large for a workflow_dispatch (GitHub allows {MAX_INPUT_CHARS} characters of "
                      "inputs)", "run it on a local or ssh runner (`/perf verify runner=NAME`)")
    return inputs


def _refuse_what_the_workflow_cannot_do(record: PerfIssue, config: PerfbotFile, runner: Runner) -> None:
    """deploy/github/perfbot_bench.py times exact outputs of program.bend against C on wall time, nothing more."""
    settings = config.run
    asked = [what for what, used in (
        ("`reference:`", bool(record.reference)), ("`inputs:`", bool(record.inputs)),
        ("[run] program", settings.program is not None), (f'[run] output = "{settings.output}"',
                                                          settings.output != "exact"),
        ("[run] metrics", bool(settings.metrics)), (f'[verify] measure = "{config.measure}"',
                                                    config.measure != "wall"),
    ) if used]
    if asked:
        raise Invalid(f"cannot verify {record.slug} on {runner.name}: the GitHub Actions bench script does not "
                      f"support {', '.join(asked)} yet", "run it on a local or ssh runner (`/perf verify runner=NAME`)")


def read_samples(data: bytes) -> dict:
    """The samples JSON out of the artifact zip, or ArtifactError naming the first problem."""
    if len(data) > MAX_ZIP_BYTES:
        raise ArtifactError(f"the artifact is {len(data)} bytes, over the {MAX_ZIP_BYTES}-byte limit")
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
        members = archive.infolist()
    except (zipfile.BadZipFile, ValueError, OSError) as exc:
        raise ArtifactError(f"the artifact is not a readable zip ({exc})") from None
    if len(members) != 1:
        raise ArtifactError(f"the artifact holds {len(members)} files; only {SAMPLES_FILE} is expected")
    member = members[0]
    name = member.filename
    if name.startswith(("/", "\\")) or ":" in name or "\\" in name or ".." in name.split("/"):
        raise ArtifactError(f"the artifact's member {name[:80]!r} has an unsafe path")
    if stat.S_ISLNK(member.external_attr >> 16):
        raise ArtifactError(f"the artifact's member {name[:80]!r} is a symbolic link")
    if name != SAMPLES_FILE:
        raise ArtifactError(f"the artifact holds {name[:80]!r}; only {SAMPLES_FILE} is expected")
    if member.file_size > MAX_JSON_BYTES:
        raise ArtifactError(f"{SAMPLES_FILE} unpacks to {member.file_size} bytes, over the {MAX_JSON_BYTES}-byte limit")
    if member.file_size > MAX_RATIO * max(member.compress_size, 1):
        raise ArtifactError(f"{SAMPLES_FILE} compresses {member.file_size // max(member.compress_size, 1)}:1, "
                            "which only a zip bomb does")
    try:
        with archive.open(member) as handle:
            text = handle.read(MAX_JSON_BYTES + 1)  # the header's size may lie: never read past the limit
    except (zipfile.BadZipFile, NotImplementedError, RuntimeError, OSError) as exc:
        raise ArtifactError(f"{SAMPLES_FILE} cannot be unpacked ({exc})") from None
    if len(text) > MAX_JSON_BYTES:
        raise ArtifactError(f"{SAMPLES_FILE} unpacks past the {MAX_JSON_BYTES}-byte limit")
    try:
        return json.loads(text, parse_constant=_no_constant)
    except ValueError as exc:
        raise ArtifactError(f"{SAMPLES_FILE} is not JSON ({str(exc)[:120]})") from None


def _no_constant(name: str):
    raise ArtifactError(f"{SAMPLES_FILE} holds {name}, which is no time")


def checked_sides(samples: dict, run: BenchRun, par: bool) -> list[tuple[str, str, list[float], list[float], str]]:
    """(label, sha, first times, second times, output) per side, in the run's order, every value checked."""
    if not isinstance(samples, dict) or samples.get("run") != run.id:
        raise ArtifactError(f"{SAMPLES_FILE} is not the samples of bench run {run.id}")
    expected = ([("base", run.base)] if run.compares_base and run.base else []) + [("head", run.head)]
    sides = samples.get("sides")
    if not isinstance(sides, list) or [(s.get("side"), s.get("sha")) if isinstance(s, dict) else None
                                       for s in sides[:len(expected)]] != expected[:len(sides)]:
        raise ArtifactError(f"{SAMPLES_FILE} measured other commits than bench run {run.id} asked for "
                            f"({', '.join(f'{label} {sha[:12]}' for label, sha in expected)})")
    first, second = KINDS[1] if par else KINDS[0]
    out = []
    for side in sides:
        times = [side.get(first), side.get(second)]
        for key, values in zip((first, second), times, strict=True):
            if not isinstance(values, list) or not values or len(values) > 10_000 or not all(
                    isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) and v > 0
                    for v in values):
                raise ArtifactError(f"{SAMPLES_FILE}: {side['side']} {key} must be a list of positive, finite times")
        if len(times[0]) != len(times[1]):
            raise ArtifactError(f"{SAMPLES_FILE}: {side['side']} has {len(times[0])} {first} but "
                                f"{len(times[1])} {second}; pairs are interleaved, so the counts match")
        output = side.get("output") if isinstance(side.get("output"), str) else ""
        out.append((side["side"], side["sha"], [float(v) for v in times[0]], [float(v) for v in times[1]],
                    output[:200]))
    return out
