"""`[build]` of `.perfbot.toml`: the build command, its placeholders, and a build script kept on the default branch.

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

from bot.core.config_checks import ConfigFileError, fill, line_of

BUILD_KEYS = {"command": "build_argv", "script": "repo_file"}
SCRIPT_COMMAND = ("{script}", "{checkout}", "{sha}")


@dataclass(frozen=True)
class BuildScript:
    """The script `[build] script` names; `text` is filled by bot/services/bench_inputs.py from the same source
    as the configuration, and stays None in a configuration only parsed."""

    path: str
    text: str | None = None

    @property
    def name(self) -> str:
        return self.path.rsplit("/", 1)[-1]


def parse_build(values: dict, lines: list[str]) -> tuple[tuple[str, ...] | None, BuildScript | None]:
    """The build command (the script's default one when only a script is named) and the script, checked."""
    command, script = values.get("command"), values.get("script")
    if script is None:
        if command and any("{script}" in arg for arg in command):
            raise ConfigFileError("build.command", line_of(lines, "command"), "uses {script} but [build] names no "
                                  'script; add script = "path/in/the/repository"')
        return command, None
    if command and not any("{script}" in arg for arg in command):
        raise ConfigFileError("build.command", line_of(lines, "command"), f"never runs the script {script}: put "
                              "{script} in it (e.g. [\"sh\", \"{script}\", \"{checkout}\"]), or drop [build] script")
    return command or SCRIPT_COMMAND, BuildScript(script)


def build_argv(command: tuple[str, ...], *, checkout: str, sha: str, script: str | None) -> list[str]:
    """The command for one checkout: {checkout} its absolute path, {sha} the commit, {script} the script's path."""
    return fill(command, checkout=checkout, sha=sha, **({"script": script} if script is not None else {}))


def script_problem(script: BuildScript, command: tuple[str, ...]) -> str | None:
    """Why a loaded script cannot run as the command says, in words that say the fix; None when it can."""
    if script.text is None:
        return None
    if command[0] == "{script}" and not script.text.startswith("#!"):
        return (f"{script.path} is run as a program ({' '.join(command)}) but has no #! line: start it with "
                "#!/bin/sh (or name an interpreter first in [build] command)")
    return None
