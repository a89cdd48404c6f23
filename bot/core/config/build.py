"""`[build]`: the build command, its placeholders, and a build script kept on the default branch.

    [build]
    script = ".perfbot/build.sh"   # optional: a file of the configuration's own source (the default branch)
    command = ["{script}", "{checkout}", "{sha}"]   # the default when a script is named

The configuration comes from the default branch while the commits measured may be older than it (or newer,
with a define renamed), so a build that differs between revisions needs code that outlives them: the script
is read from where `.perfbot.toml` was read, put on the runner outside the checkout, and gets the checkout's
path and the commit as arguments. Each placeholder is replaced inside one argument, never split or parsed.
"""
from __future__ import annotations

from dataclasses import dataclass

from pydantic import Field, model_validator

from bot.core.config.errors import FieldError
from bot.core.config.values import BuildArgv, RepoFile, Section

SCRIPT_COMMAND = ("{script}", "{checkout}", "{sha}")


class Build(Section):
    command: BuildArgv | None = Field(None, description='the build, run in the checkout, e.g. ["make", "-j2"]; '
                                      "placeholders {checkout} {sha} {script}")
    script: RepoFile | None = Field(None, description="a build script kept on the default branch, for builds "
                                    "that differ by revision")

    @model_validator(mode="after")
    def _script_is_run(self) -> Build:
        uses_script = self.command is not None and any("{script}" in arg for arg in self.command)
        if self.script is None and uses_script:
            raise FieldError('uses {script} but [build] names no script; add script = "path/in/the/repository"',
                             "command")
        if self.script is not None and self.command is not None and not uses_script:
            raise FieldError(f"never runs the script {self.script}: put {{script}} in it (e.g. [\"sh\", "
                             "\"{script}\", \"{checkout}\"]), or drop [build] script", "command")
        return self

    @property
    def argv(self) -> tuple[str, ...] | None:
        return self.command or (SCRIPT_COMMAND if self.script else None)


@dataclass(frozen=True)
class BuildScript:
    """The script `[build] script` names; `text` is filled by bot/services/bench/bench_inputs.py from the same source
    as the configuration, and stays None in a configuration only parsed."""

    path: str
    text: str | None = None

    @property
    def content(self) -> str:
        """`text`, once read: a runner installing the script of a configuration only parsed is a bug."""
        if self.text is None:
            raise ValueError(f"[build] script {self.path} was not read from the repository")
        return self.text

    @property
    def name(self) -> str:
        return self.path.rsplit("/", 1)[-1]


def fill(template: tuple[str, ...], **values: str) -> list[str]:
    """Placeholders filled by plain substitution: each stays one argument whatever its text (never a shell)."""
    out = []
    for arg in template:
        for key, value in values.items():
            arg = arg.replace("{" + key + "}", value)
        out.append(arg)
    return out


def build_argv(command: tuple[str, ...], *, checkout: str, sha: str, script: str | None) -> list[str]:
    """The command for one checkout: {checkout} its absolute path, {sha} the commit, {script} the script's path."""
    return fill(command, checkout=checkout, sha=sha, **({"script": script} if script is not None else {}))


def script_problem(script: BuildScript, command: tuple[str, ...] | None) -> str | None:
    """Why a loaded script cannot run as the command says, in words that say the fix; None when it can."""
    if script.text is None or not command:
        return None
    if command[0] == "{script}" and not script.text.startswith("#!"):
        return (f"{script.path} is run as a program ({' '.join(command)}) but has no #! line: start it with "
                "#!/bin/sh (or name an interpreter first in [build] command)")
    return None
