"""The `perfbot` command line: one click group, one module per family of commands."""
from __future__ import annotations

import importlib

import click

# name -> "module:attribute". A command's module is imported only when that command runs (or help lists
# it): `perfbot lint` need not load the anthropic SDK.
COMMANDS = {
    "lint": "bot.cli.lint_cmd:lint_command",
    "sync": "bot.cli.sync_cmd:sync_command",
    "list": "bot.cli.records_cmd:list_command",
    "show": "bot.cli.records_cmd:show_command",
    "new": "bot.cli.new_cmd:new_command",
    "serve": "bot.cli.service_cmd:serve_command",
    "worker": "bot.cli.service_cmd:worker_command",
    "deliveries": "bot.cli.service_cmd:deliveries_command",
    "redeliver": "bot.cli.service_cmd:redeliver_command",
    "dedup": "bot.cli.dedup_cmd:dedup_command",
    "verify": "bot.cli.verify_cmd:verify_command",
    "bisect": "bot.cli.bisect_cmd:bisect_command",
    "demo": "bot.cli.demo_cmd:demo_command",
    "digest": "bot.cli.digest_cmd:digest_command",
    "app-manifest": "bot.cli.manifest_cmd:manifest_command",
    "parity": "bot.cli.parity_cmd:parity_command",
}


class LazyGroup(click.Group):
    """A group whose commands are imported when they are looked up (click's documented lazy-loading pattern)."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        target = COMMANDS.get(cmd_name)
        if target is None:
            return None
        module, attribute = target.split(":")
        command = getattr(importlib.import_module(module), attribute)
        if command.name != cmd_name:
            raise RuntimeError(f"{target} is named {command.name!r}, not {cmd_name!r}")
        return command


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(package_name="perfbot")
def main() -> None:
    """perfbot keeps a performance campaign honest: reports in devs/issues/ become records.

    Exit codes: 0 success, 1 the command found problems (lint errors, unknown record),
    2 usage errors (bad options, missing files).
    """
