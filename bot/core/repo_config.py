"""`.perfbot.toml`, parsed strictly: every key known, every value checked, every error naming its key and line.

    [build]                     # how to build the project at a commit (run in its checkout)
    command = ["make", "-j2"]   # placeholders {checkout} {sha} {script} only; see build_config.py
    script = ".perfbot/build.sh"  # optional: kept on the default branch, for builds that differ by revision
    [run]                       # argument templates; placeholders {file} {threads} {input} {out} only
                                # (program, output, normalize, metrics, [verify] measure, threads,
                                # flatten_gain and [references.NAME]: see run_settings.py)
    language = ["./bin/bend", "run-c", "{file}", "--threads", "{threads}"]
    c_compile = ["gcc", "-O2", "-o", "{out}", "{file}"]
    c_run = ["{out}"]
    [suite]                     # optional: the project's own benchmark suite
    command = ["make", "bench"]
    format = "json"             # json | tsv
    tolerance = 0.05            # slowdown allowed before it is a regression
    [verify]
    seq_threshold = 2.0
    par_efficiency = 0.75
    claim_factor = 1.5          # a claim outside the measured interval and this far off is flagged
    min_samples = 5
    max_samples = 30
    budget_seconds = 900
    timeout_seconds = 120
    memory_mb = 4096
    fixes = true                # verify a fix (PR or branch of this repository) whenever its head moves
    on_open = false             # measure each new report's claim on the default branch
    [[runners]]
    name = "mini-1"
    kind = "ssh"                # local | ssh
    host = "mini-1.lan"
    user = "bench"
    port = 22
    path = "~/.cache/perfbot/mini-1"  # ssh only: the remote folder (absolute or ~/), expanded on the host
    labels = ["c", "metal"]
    [[runners]]                 # a workflow_dispatch of deploy/github/perfbot-bench.yml on self-hosted runners
    name = "cuda-box"
    kind = "actions"            # workflow (default perfbot-bench.yml), runs_on (default self-hosted + labels)
    labels = ["cuda"]
    [[milestones]]              # goals the weekly digest tracks (bot/core/milestones.py counts progress)
    name = "every seq report at or under 2x"
    kind = "seq-near-c"         # seq-near-c (threshold, backend) | par-speedup (reports, target) | suite-passes (runner)
    due = 2026-12-31
    [digest]
    schedule = "mon 09:00"      # weekday and 24-hour time
    timezone = "Europe/Berlin"  # IANA name
    window_days = 7
    label = "digest"
    [parity]                    # paired Metal/CUDA code kept in step (bot/core/parity_config.py)
    files = ["runtime/gpu/*.h"]
    [notify]                    # bot/core/notify_config.py: milestones and blockers posted at once
    people = ["lead"]           # mentioned in each notice; webhook_url = "https://..." (secret from the env)
    [gpu]                       # bot/core/gpu_config.py: metal/cuda reports forced onto the GPU, and auto
    run = ["./bin/bend", "run-cuda", "{file}"]
    [guards]                    # bot/core/guard_config.py: fixed reports measured again (on by default)
    debounce_minutes = 15       # after pushes to the default branch pause; schedule = "daily 03:00" also

A missing section turns its feature off; callers say so when asked for it.
"""
from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field, replace

from bot.core.build_config import BUILD_KEYS, BuildScript, parse_build
from bot.core.config_checks import ConfigFileError, check as _check, line_of as _line_of, remote_path_ok, suggest as _suggest
from bot.core.run_settings import RUN_KEYS, VERIFY_KEYS, RunSettings, parse_run_settings
from bot.core.milestone_config import (DIGEST_KEYS, MILESTONE_KEYS, DigestSchedule, Milestone, parse_digest,
                                       parse_milestones)
from bot.core.parity_config import PARITY_KEYS, ParityConfig, parse_parity
from bot.core.notify_config import NOTIFY_KEYS, NotifySettings, parse_notify
from bot.core.guard_config import GUARD_KEYS, GuardSettings, parse_guards
from bot.core.gpu_config import GPU_KEYS, GpuSettings, parse_gpu

__all__ = ["ConfigFileError", "DigestSchedule", "Milestone", "RepoConfig", "Runner", "Suite", "parse_repo_config",
           "remote_path_ok"]

@dataclass(frozen=True)
class Runner:
    name: str
    kind: str
    labels: tuple[str, ...]
    host: str | None = None
    user: str | None = None
    port: int = 22
    path: str | None = None  # ssh: the remote folder; None: ~/.cache/perfbot/<name>
    workflow: str = "perfbot-bench.yml"  # actions: the workflow file dispatched
    runs_on: tuple[str, ...] = ()  # actions: the job's runs-on labels


@dataclass(frozen=True)
class Suite:
    command: tuple[str, ...]
    format: str = "json"
    tolerance: float = 0.05
    samples: int = 5  # runs of the suite per side, base and head interleaved
    timeout_seconds: int | None = None  # per run of the whole suite; None: [verify] timeout_seconds


@dataclass(frozen=True)
class RepoConfig:
    build: tuple[str, ...] | None = None
    build_script: BuildScript | None = None
    run_language: tuple[str, ...] | None = None
    c_compile: tuple[str, ...] = ("gcc", "-O2", "-o", "{out}", "{file}")
    c_run: tuple[str, ...] = ("{out}",)
    suite: Suite | None = None
    seq_threshold: float = 2.0
    par_efficiency: float = 0.75
    claim_factor: float = 1.5  # core/claim_size.py
    min_samples: int = 5
    max_samples: int = 30
    budget_seconds: int = 900
    timeout_seconds: int = 120
    memory_mb: int = 4096
    verify_fixes: bool = True  # attached fixes of this repository (not forks) are verified when their head moves
    verify_on_open: bool = False  # a new report's claim is measured on the default branch
    runners: tuple[Runner, ...] = field(default=(Runner("local", "local", ("c",)),))
    milestones: tuple[Milestone, ...] = ()
    digest: DigestSchedule = DigestSchedule()
    run: RunSettings = RunSettings()  # program file, output rule, metrics, measure, references (run_settings.py)
    parity: ParityConfig = ParityConfig()  # [parity]: see bot/core/parity_config.py
    notify: NotifySettings = NotifySettings()
    guards: GuardSettings = GuardSettings()  # [guards]: see bot/core/guard_config.py
    gpu: GpuSettings = GpuSettings()  # [gpu]: see bot/core/gpu_config.py

    def runner_for(self, backend: str) -> Runner | None:
        return next((r for r in self.runners if backend in r.labels), None)


SCHEMA = {
    "build": BUILD_KEYS,
    "run": {"language": "argv", "c_compile": "argv", "c_run": "argv"},
    "suite": {"command": "argv", "format": ("json", "tsv"), "tolerance": "fraction", "samples": "count",
              "timeout_seconds": "count"},
    "verify": {"seq_threshold": "positive", "par_efficiency": "fraction", "claim_factor": "positive",
               "min_samples": "count",
               "max_samples": "count", "budget_seconds": "count", "timeout_seconds": "count", "memory_mb": "count",
               "fixes": "flag", "on_open": "flag"},
    "runners": {"name": "name", "kind": ("local", "ssh", "actions"), "host": "host", "user": "user", "port": "port",
                "labels": "labels", "path": "remote_path", "workflow": "workflow", "runs_on": "runs_on"},
    "milestones": MILESTONE_KEYS,
    "digest": DIGEST_KEYS,
    "references": {},  # run_settings.py parses it
    "parity": PARITY_KEYS,
    "notify": NOTIFY_KEYS,
    "guards": GUARD_KEYS,
    "gpu": GPU_KEYS,
}


def parse_repo_config(text: str) -> RepoConfig:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        found = re.search(r"line (\d+)", str(exc))
        line = int(found.group(1)) if found else max(1, len(text.rstrip("\n").splitlines()))  # "end of document"
        raise ConfigFileError("(syntax)", line, str(exc).split(" (at")[0]) from None
    lines = text.splitlines()
    for section in data:
        if section not in SCHEMA:
            raise ConfigFileError(section, _line_of(lines, section), f"unknown section{_suggest(section, SCHEMA)}")
    values: dict = {}
    # run_settings.py owns some keys of [run] and [verify]: they leave those tables before the strict check.
    owned = {section: {key: data[section].pop(key) for key in keys if key in data[section]}
             for section, keys in (("run", RUN_KEYS), ("verify", VERIFY_KEYS)) if isinstance(data.get(section), dict)}
    run_settings = parse_run_settings(owned.get("run", {}), owned.get("verify", {}), data.get("references"), lines)
    for section in ("build", "run", "suite", "verify"):
        if section in data:
            values[section] = _table(data[section], section, lines)
    runners = data.get("runners")
    if runners is not None and not (isinstance(runners, list) and all(isinstance(r, dict) for r in runners)):
        raise ConfigFileError("runners", _line_of(lines, "runners"), "write each runner as a [[runners]] table")
    build, build_script = parse_build(values.get("build", {}), lines)
    config = RepoConfig(
        build=build,
        build_script=build_script,
        run_language=values.get("run", {}).get("language"),
        c_compile=values.get("run", {}).get("c_compile", RepoConfig.c_compile),
        c_run=values.get("run", {}).get("c_run", RepoConfig.c_run),
        suite=_suite(values.get("suite"), lines),
        **_renamed(values.get("verify", {}), fixes="verify_fixes", on_open="verify_on_open"),
        **({"runners": tuple(_runner(r, lines) for r in runners)} if runners is not None else {}),
        run=run_settings,
    )
    if config.min_samples > config.max_samples:
        raise ConfigFileError("verify.min_samples", _line_of(lines, "min_samples"), "is larger than max_samples")
    names = [r.name for r in config.runners]
    if len(set(names)) != len(names):
        raise ConfigFileError("runners.name", _line_of(lines, "runners"), "two runners share a name")
    return replace(config, milestones=parse_milestones(data.get("milestones"), lines, set(names)),
                   digest=parse_digest(data.get("digest"), lines), parity=parse_parity(data.get("parity"), lines),
                   notify=parse_notify(data.get("notify"), lines), guards=parse_guards(data.get("guards"), lines),
                   gpu=parse_gpu(data.get("gpu"), lines))


def _renamed(values: dict, **names: str) -> dict:
    return {names.get(key, key): value for key, value in values.items()}


def _table(table, section: str, lines: list[str]) -> dict:
    if not isinstance(table, dict):
        raise ConfigFileError(section, _line_of(lines, section), "must be a table: write it as [" + section + "]")
    out = {}
    for key, value in table.items():
        kind = SCHEMA[section].get(key)
        if kind is None:
            raise ConfigFileError(f"{section}.{key}", _line_of(lines, key),
                                  f"unknown key{_suggest(key, SCHEMA[section])}")
        out[key] = _check(f"{section}.{key}", value, kind, _line_of(lines, key))
    return out


def _suite(values: dict | None, lines: list[str]) -> Suite | None:
    if values is None:
        return None
    if "command" not in values:
        raise ConfigFileError("suite.command", _line_of(lines, "suite"), "a [suite] needs its command")
    return Suite(**values)


def _runner(table: dict, lines: list[str]) -> Runner:
    values = _table(table, "runners", lines)
    for required in ("name", "kind", "labels"):
        if required not in values:
            raise ConfigFileError(f"runners.{required}", _line_of(lines, "runners"), "is required for every runner")
    if values["kind"] == "ssh" and "host" not in values:
        raise ConfigFileError("runners.host", _line_of(lines, "runners"), f"ssh runner {values['name']} needs a host")
    if values["kind"] == "local" and "path" in values:
        raise ConfigFileError("runners.path", _line_of(lines, "path"), "is for ssh runners; a local runner keeps "
                              "its worktrees in the instance folder")
    misplaced = ({"host", "user", "port", "path"} if values["kind"] == "actions" else {"workflow", "runs_on"}) & set(values)
    for key in sorted(misplaced)[:1]:
        raise ConfigFileError(f"runners.{key}", _line_of(lines, key), f"does not apply to {values['kind']} runners")
    if values["kind"] == "actions" and "runs_on" not in values:
        values["runs_on"] = ("self-hosted", *values["labels"])
    return Runner(**values)
