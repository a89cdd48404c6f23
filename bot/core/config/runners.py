"""`[[runners]]` (where benchmarks run: the operator's instance file, instance.py) and `[suite]` (the project's own
benchmark suite, in `.perfbot.toml`).

    [[runners]]
    name = "mini-1"
    kind = "ssh"                # local | ssh | actions
    host = "mini-1.lan"
    labels = ["c", "metal"]     # the backends whose reports it runs
    path = "~/.cache/perfbot/mini-1"  # ssh only: the remote folder (absolute or ~/), expanded on the host
    sandbox = "bwrap"           # bwrap (default; no bwrap, no run) | none (a dedicated bench host, e.g. a Mac)
    [[runners]]                 # a workflow_dispatch of deploy/github/perfbot-bench.yml on self-hosted runners
    name = "cuda-box"
    kind = "actions"            # workflow (default perfbot-bench.yml), runs_on (default self-hosted + labels)
    labels = ["cuda"]
"""
from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BeforeValidator, Field, model_validator

from bot.core.config.errors import FieldError
from bot.core.config.values import (
    Argv,
    Count,
    Fraction,
    Host,
    Labels,
    Name,
    Port,
    RemotePath,
    RunsOn,
    Section,
    User,
    Workflow,
    choice,
)

_ONLY_FOR = {"actions": ("host", "user", "port", "path", "sandbox"), "local": ("workflow", "runs_on"),
             "ssh": ("workflow", "runs_on")}


class Runner(Section):
    name: Name = Field(description="the runner's name, e.g. \"mini-1\"")
    kind: Annotated[Literal["local", "ssh", "actions"], BeforeValidator(choice("local", "ssh", "actions"))] = Field(
        description='local | ssh | actions')
    labels: Labels = Field(description='the backends it runs, among "c", "metal", "cuda"')
    host: Host | None = Field(None, description="ssh: the bench host")
    user: User | None = Field(None, description="ssh: the user on the bench host")
    port: Port = Field(22, description="ssh: the port")
    path: RemotePath | None = Field(None,
                                    description="ssh: the remote folder, absolute or ~/ (default "
                                                 "~/.cache/perfbot/NAME)")
    workflow: Workflow = Field("perfbot-bench.yml", description="actions: the workflow file dispatched")
    runs_on: RunsOn = Field((),
                            description="actions: the job's runs-on labels (default: self-hosted and the "
                                         "runner's labels)")
    sandbox: Annotated[Literal["bwrap", "none"], BeforeValidator(choice("bwrap", "none"))] = "bwrap"

    @model_validator(mode="before")
    @classmethod
    def _actions_run_on_their_labels(cls, data: object) -> object:  # the table as written
        if isinstance(data, dict) and data.get("kind") == "actions" and "runs_on" not in data \
                and isinstance(data.get("labels"), (list, tuple)):
            return {**data, "runs_on": ["self-hosted", *data["labels"]]}
        return data

    @model_validator(mode="after")
    def _keys_fit_the_kind(self) -> Runner:
        if self.kind == "ssh" and self.host is None:
            raise FieldError(f"ssh runner {self.name} needs a host", "host")
        if self.kind == "local" and self.path is not None:
            raise FieldError("is for ssh runners; a local runner keeps its worktrees in the instance folder", "path")
        for key in _ONLY_FOR[self.kind]:
            if key in self.model_fields_set:
                raise FieldError(f"does not apply to {self.kind} runners", key)
        return self


class Suite(Section):
    command: Argv = Field(description='the suite\'s command, e.g. command = ["make", "bench"]')
    format: Annotated[Literal["json", "tsv"], BeforeValidator(choice("json", "tsv"))] = "json"
    tolerance: Fraction = Field(0.05, description="the slowdown allowed before it is a regression")
    samples: Count = Field(5, description="runs of the suite per side, base and head interleaved")
    timeout_seconds: Count | None = Field(None, description="per run of the whole suite (default: [verify] "
                                          "timeout_seconds)")
