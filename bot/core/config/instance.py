"""The operator's configuration: `instance/perfbot.toml` (and PERFBOT_* variables), trusted, unlike `.perfbot.toml`.

    [[runners]]                  # where benchmarks run (runners.py); none: the local runner, for the CLI only
    name = "mini-1"
    kind = "ssh"
    host = "mini-1.lan"
    labels = ["c"]
    [sandbox]
    readable = ["/srv/datasets"] # folders shown read-only inside the sandbox
    processes = 256              # processes and threads of one run's tree (a repository may ask fewer)
    output_mb = 16
    [limits]                     # ceilings: a repository's [verify] may ask less, never more
    memory_mb = 8192
    timeout_seconds = 600
    threads = 64
    [references]
    allow = ["https://github.com/org/"]   # URL prefixes a [references.NAME] repository may name
    [notify]
    allow = ["https://chat.example/hooks/"]  # URL prefixes a repository's [notify] webhook_url may POST to
    [llm]
    report_max_bytes = 262144    # a larger report is mirrored with a lint error, never sent to the LLM
    reviews_per_push = 20        # LLM reviews one push may ask for; the rest wait in the queue
    reviews_per_hour = 200

The repository's file may narrow these (fewer processes, less memory, fewer threads); `narrow` lays the operator's
view over a parsed `.perfbot.toml`, so every run reads one configuration whose caps the operator bounds.
"""
from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated
from urllib.parse import urlsplit

from pydantic import BeforeValidator, Field, ValidationError, model_validator

from bot.core.config.errors import ConfigFileError, FieldError, first_error, load_toml
from bot.core.config.hosts import SandboxSettings
from bot.core.config.lines import key_lines, line_for
from bot.core.config.runners import Runner
from bot.core.config.values import Count, Section

if TYPE_CHECKING:  # model.py imports this module: the file is what narrow() lays the operator's view over
    from bot.core.config.model import PerfbotFile

REPORT_MAX_BYTES = 256 * 1024
INSTANCE_FILE = "instance/perfbot.toml"
LOCAL_RUNNER = Runner(name="local", kind="local", labels=("c",))


def _prefixes(value: object) -> tuple[str, ...]:
    if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
        raise ValueError('must list URL prefixes, e.g. ["https://github.com/org/"]')
    for prefix in value:
        parts = urlsplit(prefix)
        if parts.scheme not in ("https", "ssh", "git", "file", "http") or not prefix.endswith("/") \
                or ".." in prefix.split("/"):
            raise ValueError(f"{prefix[:80]!r} must be a URL prefix ending in '/', e.g. \"https://github.com/org/\"")
    return tuple(value)


class Limits(Section):
    """Ceilings on what one run may take: the repository's [verify] values are lowered to these."""

    memory_mb: Count = Field(16384, description="the most memory one run's process tree may have")
    timeout_seconds: Count = Field(1800, description="the longest one run may take")
    budget_seconds: Count = Field(7200, description="the longest one verification may take")
    threads: Count = Field(256, description="the most threads a par sweep may ask for")


class ReferenceSources(Section):
    allow: Annotated[tuple[str, ...], BeforeValidator(_prefixes)] = ()


class NotifySources(Section):
    """Where perfbot's notices may be POSTed: a repository's `[notify] webhook_url` is sent only under one of
    these prefixes, so a `.perfbot.toml` cannot point the bot host at an internal address."""

    allow: Annotated[tuple[str, ...], BeforeValidator(_prefixes)] = ()


class LlmBudget(Section):
    report_max_bytes: Count = Field(REPORT_MAX_BYTES, description="a larger report is never sent to the LLM")
    reviews_per_push: Count = Field(20, description="LLM reviews one push may ask for; the rest wait")
    reviews_per_hour: Count = Field(200, description="LLM reviews per hour and repository; the rest wait")


class InstanceFile(Section):
    """The sections of `instance/perfbot.toml` that say what a report's code may see and use."""

    runners: tuple[Runner, ...] | None = None  # None: the local runner, which the service never uses unnamed
    sandbox: SandboxSettings = SandboxSettings()
    limits: Limits = Limits()
    references: ReferenceSources = ReferenceSources()
    notify: NotifySources = NotifySources()
    llm: LlmBudget = LlmBudget()

    @model_validator(mode="after")
    def _one_name_each(self) -> InstanceFile:
        names = [runner.name for runner in self.runners or ()]
        for index, name in enumerate(names):
            if name in names[:index]:
                raise FieldError(f"two runners share the name {name!r}", "runners", index, "name")
        return self


_SANDBOX, _LIMITS, _LLM = SandboxSettings(), Limits(), LlmBudget()


@dataclass(frozen=True)
class OperatorConfig:
    """What the operator allows, in the form a run reads it."""

    runners: tuple[Runner, ...] = (LOCAL_RUNNER,)
    runners_named: bool = False  # [[runners]] written: the service may then use a local runner it names
    sandbox: SandboxSettings = _SANDBOX
    limits: Limits = _LIMITS
    reference_sources: tuple[str, ...] = ()
    notify_sources: tuple[str, ...] = ()
    llm: LlmBudget = _LLM

    @classmethod
    def of(cls, file: InstanceFile) -> OperatorConfig:
        return cls(runners=file.runners if file.runners is not None else (LOCAL_RUNNER,),
                   runners_named=file.runners is not None, sandbox=file.sandbox, limits=file.limits,
                   reference_sources=file.references.allow, notify_sources=file.notify.allow, llm=file.llm)

    def without_sandbox(self) -> OperatorConfig:
        """`perfbot verify --no-sandbox`: the person at the terminal is the operator and says so."""
        return dataclasses.replace(self, runners=tuple(
            r.model_copy(update={"sandbox": "none"}) if r.kind != "actions" else r for r in self.runners))

    def narrow(self, config: PerfbotFile) -> PerfbotFile:
        """The repository's file under the operator's ceilings, with the operator's runners and sandbox."""
        limits, verify = self.limits, config.verify
        processes = min(verify.processes or self.sandbox.processes, self.sandbox.processes)
        threads = verify.threads
        if threads is not None:
            threads = tuple(t for t in threads if t <= limits.threads) or (1,)
        narrowed = verify.model_copy(update={
            "memory_mb": min(verify.memory_mb, limits.memory_mb),
            "timeout_seconds": min(verify.timeout_seconds, limits.timeout_seconds),
            "budget_seconds": min(verify.budget_seconds, limits.budget_seconds), "threads": threads})
        return config.under(dataclasses.replace(self, sandbox=self.sandbox.model_copy(update={"processes": processes})),
                            narrowed)


DEFAULT_OPERATOR = OperatorConfig()  # no instance file: the local runner, sandboxed, default ceilings


def parse_instance_config(text: str, file: str = INSTANCE_FILE) -> tuple[dict, OperatorConfig]:
    """The instance file: its [service] table (settings, checked by bot.config.Settings) and the operator's view;
    the first mistake raised as `FILE:LINE: key: problem`."""
    data = load_toml(text, file)
    service = data.pop("service", {})
    if not isinstance(service, dict):
        raise ConfigFileError("service", line_for(key_lines(text), ("service",)), "must be a table: [service]", file)
    try:
        return service, OperatorConfig.of(InstanceFile.model_validate(data))
    except ValidationError as exc:
        raise first_error(exc, InstanceFile, key_lines(text), file) from None


def source_allowed(url: str, allowed: tuple[str, ...]) -> bool:
    """A reference's URL is fetched, and a notice POSTed, only under a prefix the operator wrote; `..` never
    climbs out of one."""
    if ".." in url.split("/") or not re.fullmatch(r"[\x21-\x7e]+", url):
        return False
    return any(url.startswith(prefix) for prefix in allowed)
