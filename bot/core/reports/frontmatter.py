"""The YAML front matter: load it safely, validate each known key, and say precisely what is wrong."""
from __future__ import annotations

import difflib
import math
import re
from dataclasses import dataclass, field

import yaml

from bot.core.reports.records import BACKENDS, SLUG_RE, TRACKS, Finding, Severity, slug_from_filename

_MEASURE = re.compile(r"wall|user|instructions|metric:[A-Za-z][A-Za-z0-9_]{0,31}")
KNOWN_KEYS = ("track", "backend", "threads", "ratio", "fix", "supersedes", "reference", "inputs", "mode", "measure")
# `mode:` of a metal/cuda par report: what its claim is about (bot/services/bench/gpu_sweep.py verifies each).
MODES = ("gpu", "auto")
# `reference: runtime@<ref>` (this project at another ref) or `reference: NAME[@<ref>]` ([references.NAME])
_REFERENCE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,62}(@[A-Za-z0-9_][A-Za-z0-9_./+-]{0,199})?")
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # same semantics as yaml.safe_load, 10x faster
_TRACK_HINTS = {"sequential": "seq", "serial": "seq", "single": "seq", "parallel": "par", "multi": "par"}
_BACKEND_HINTS = {"cpu": "c", "gpu": "cuda", "nvidia": "cuda", "apple": "metal", "mps": "metal", "cu": "cuda"}


@dataclass(frozen=True)
class FrontMatter:
    """Valid facts from the front matter (invalid values are left out and reported in `findings`)."""

    facts: dict = field(default_factory=dict)
    lines: dict = field(default_factory=dict)
    unknown_keys: tuple[str, ...] = ()
    findings: tuple[Finding, ...] = ()


def read_front_matter(source: str, first_line: int, file: str) -> FrontMatter:
    """Validate the YAML between the `---` lines; `first_line` is the file line of its first YAML line."""
    problems = _Problems(file)
    try:
        node, data = _load(source)
    except Exception as exc:  # yaml raises many types (and RecursionError on deep nesting): all mean "unparsable"
        mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
        line = first_line + mark.line if mark is not None else first_line - 1
        reason = getattr(exc, "problem", None) or type(exc).__name__
        problems.add("front-matter", Severity.ERROR, line,
                     f"front matter is not valid YAML: {shown(reason)} (line {line})",
                     f"fix the YAML on line {line}: one `key: value` per line, e.g. `ratio: 3.4`")
        return FrontMatter(findings=problems.found)
    if data is None:
        return FrontMatter()
    if not isinstance(data, dict) or not isinstance(node, yaml.MappingNode):
        problems.add("front-matter", Severity.ERROR, first_line,
                     f"front matter is a {type(data).__name__}, not a mapping of `key: value` lines",
                     "write one `key: value` per line, e.g. `track: seq` then `ratio: 3.4`")
        return FrontMatter(findings=problems.found)

    lines: dict[str, int] = {}
    raw: dict[str, str] = {}
    unknown: list[str] = []
    for key_node, value_node in node.value:
        key, line = str(key_node.value), first_line + key_node.start_mark.line
        if key in lines:
            problems.add("front-matter-key", Severity.WARNING, line,
                         f"key '{shown(key)}' appears twice (lines {lines[key]} and {line}); the last one wins",
                         f"keep one `{shown(key)}:` line")
        elif key not in KNOWN_KEYS:
            unknown.append(key)
            close = difflib.get_close_matches(key.lower(), KNOWN_KEYS, n=1, cutoff=0.5)
            hint = f"did you mean `{close[0]}`?" if close else f"known keys: {', '.join(KNOWN_KEYS)}"
            problems.add("front-matter-key", Severity.WARNING, line, f"unknown front matter key '{shown(key)}'",
                         f"{hint} (or move this to the prose)")
        lines[key] = line
        if isinstance(value_node, yaml.ScalarNode):
            raw[key] = value_node.value
    facts = _validate(data, lines, raw, problems)
    return FrontMatter(
        facts=facts,
        lines={key: lines[key] for key in KNOWN_KEYS if key in lines},
        unknown_keys=tuple(unknown),
        findings=problems.found,
    )


def _load(source: str) -> tuple[yaml.Node | None, object]:
    loader = _LOADER(source)
    try:
        node = loader.get_single_node()
        return node, (loader.construct_document(node) if node is not None else None)
    finally:
        loader.dispose()


class _Problems:
    """Collects findings for one file (a tiny helper so every check reads as one line)."""

    def __init__(self, file: str):
        self.file = file
        self._found: list[Finding] = []

    def add(self, rule: str, severity: Severity, line: int, message: str, remedy: str) -> None:
        self._found.append(Finding(self.file, max(1, line), rule, severity, message, remedy))

    @property
    def found(self) -> tuple[Finding, ...]:
        return tuple(self._found)


def shown(value: object, limit: int = 60) -> str:
    """A value as quoted in a message: whole when short, cut with an ellipsis when someone pasted a novel."""
    text = str(value)
    return text if len(text) <= limit else f"{text[: limit - 1]}\u2026"


def _value_error(problems: _Problems, lines: dict, key: str, message: str, remedy: str) -> None:
    problems.add("front-matter-value", Severity.ERROR, lines.get(key, 1), message, remedy)


def _validate(data: dict, lines: dict, raw: dict, problems: _Problems) -> dict:
    facts: dict = {}
    for key in ("track", "backend"):
        value = data.get(key)
        if value is None:
            continue
        allowed, hints = (TRACKS, _TRACK_HINTS) if key == "track" else (BACKENDS, _BACKEND_HINTS)
        word = str(value).strip().lower()
        if isinstance(value, str) and word in allowed:
            facts[key] = word
            continue
        hint = hints.get(word)
        choices = " or ".join(f"`{key}: {option}`" for option in allowed)
        _value_error(problems, lines, key, f"{key} '{shown(value)}' is not one of {', '.join(allowed)}",
                     f"write `{key}: {hint}`" if hint else f"write {choices}")

    threads = _number(data.get("threads"))
    if threads is not None:
        if isinstance(threads, float) and threads.is_integer() and threads >= 1:
            threads = int(threads)
        if isinstance(threads, int) and threads >= 1:
            facts["threads"] = threads
        else:
            _value_error(problems, lines, "threads",
                         f"threads '{shown(data['threads'])}' is not a positive whole number",
                         "write the thread (or tome) count the claim is about, e.g. `threads: 8`")

    ratio = _as_float(_number(data.get("ratio")))
    if data.get("ratio") is not None:
        if ratio is not None and math.isfinite(ratio) and ratio > 0:
            facts["ratio"] = ratio
        else:
            digits = "".join(ch for ch in str(data["ratio"]) if ch.isdigit() or ch in ".,").replace(",", ".")
            example = digits if _is_float(digits) and float(digits) > 0 else "3.4"
            _value_error(problems, lines, "ratio", f"ratio '{shown(data['ratio'])}' is not a positive number",
                         f"write the bare number, e.g. `ratio: {shown(example, 20)}` (no `x`, no units)")

    if data.get("fix") not in (None, ""):
        if "fix" in raw:
            facts["fix"] = raw["fix"].strip()
        else:
            _value_error(problems, lines, "fix", f"fix is a {type(data['fix']).__name__}, not one reference",
                         "write one of `fix: fix/<branch>`, `fix: <commit sha>`, `fix: inline`, `fix: unknown`")

    facts["supersedes"] = _supersedes(data.get("supersedes"), lines, problems)
    _verify_inputs(data, raw, lines, problems, facts)
    _check_seq_consistency(facts, lines, problems)
    return facts


def _verify_inputs(data: dict, raw: dict, lines: dict, problems: _Problems, facts: dict) -> None:
    """`reference:` and `inputs:`, what verification needs beyond the claim: checked here, used by verify_plan."""
    if data.get("reference") not in (None, ""):
        value = raw.get("reference", "").strip()
        if _REFERENCE.fullmatch(value) and ".." not in value:
            facts["reference"] = value
        else:
            _value_error(problems, lines, "reference",
                         f"reference '{shown(data['reference'])}' is not NAME or NAME@ref",
                         "write `reference: runtime@<branch or commit>` or the name of a [references.NAME] table")
    measure = data.get("measure")
    if measure is not None:  # [run] metrics live in .perfbot.toml: verify checks a metric:NAME against them
        if isinstance(measure, str) and _MEASURE.fullmatch(measure.strip()):
            facts["measure"] = measure.strip()
        else:
            _value_error(problems, lines, "measure", f"measure '{shown(measure)}' is not a measure",
                         "write `measure: wall`, `user`, `instructions` or `metric:NAME` (a count the runtime "
                         "prints, named in [run] metrics)")
    mode = data.get("mode")
    if mode is not None:
        if isinstance(mode, str) and mode.strip().lower() in MODES:
            facts["mode"] = mode.strip().lower()
        else:
            _value_error(problems, lines, "mode", f"mode '{shown(mode)}' is not one of {', '.join(MODES)}",
                         "write `mode: gpu` (the GPU forced, the default) or `mode: auto` (the claim is that the "
                         "runtime's own CPU/GPU choice picked the slower one)")
    value = data.get("inputs")
    if value is None:
        return
    items = value if isinstance(value, list) else [value]
    if items and all(isinstance(i, (str, int, float)) and not isinstance(i, bool) and str(i).strip()
                     and len(str(i)) <= 200 and "\n" not in str(i) for i in items) and len(items) <= 8:
        facts["inputs"] = tuple(str(i).strip() for i in items)
    else:
        _value_error(problems, lines, "inputs", f"inputs '{shown(value)}' is not a list of up to 8 arguments",
                     "write the sizes the program is run with, e.g. `inputs: [1000, 100000]` (each one line)")


def _supersedes(value: object, lines: dict[str, int], problems: _Problems) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, list):
        example = slug_from_filename(str(value)) if isinstance(value, str) else "perf_other"
        _value_error(problems, lines, "supersedes", f"supersedes '{shown(value)}' is not a list",
                     f"write a list: `supersedes: [{example}]`")
        return (example,) if SLUG_RE.fullmatch(example) else ()
    slugs = []
    for item in value:
        text = str(item)
        if isinstance(item, str) and SLUG_RE.fullmatch(item):
            slugs.append(item)
            continue
        guess = slug_from_filename(text.strip())
        remedy = (f"write the slug alone: `{guess}`" if SLUG_RE.fullmatch(guess)
                  else "write slugs like `perf_nested_match` (the report's file name without .md)")
        _value_error(problems, lines, "supersedes", f"supersedes item '{shown(text)}' is not a perf_ slug", remedy)
    return tuple(dict.fromkeys(slugs))


def _check_seq_consistency(facts: dict, lines: dict, problems: _Problems) -> None:
    """seq compares the language with C on one thread: other backends or thread counts contradict it."""
    if facts.get("track") != "seq":
        return
    if facts.get("backend", "c") != "c":
        _value_error(problems, lines, "backend", f"backend '{facts['backend']}' contradicts track 'seq'",
                     "seq reports compare against C: write `backend: c` (or drop it), or use `track: par`")
    if facts.get("threads", 1) != 1:
        _value_error(problems, lines, "threads", f"threads {facts['threads']} contradicts track 'seq'",
                     "seq reports are single-threaded: write `threads: 1` (or drop it), or use `track: par`")


def _number(value: object) -> object:
    """Numbers stay numbers; quoted numbers ("3.4") are tolerated; bools and other text are returned as is."""
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, str) and _is_float(value.strip()):
        number = float(value)
        return int(number) if number.is_integer() and "." not in value else number
    return value


def _as_float(value: object) -> float | None:
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        return None
    try:
        return float(value)
    except OverflowError:  # an int too large for a float is no ratio anyone measured
        return None


def _is_float(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True
