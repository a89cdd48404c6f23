"""The `perfbot` command line: one click group, one module per family of commands."""
from __future__ import annotations

import importlib

import click

# name -> ("module:attribute", one line of help). `perfbot --help` lists commands from these lines alone, so
# it imports click and nothing else; a command's module is imported only when that command runs, and its
# short help is this line too, so the two never disagree.
COMMANDS = {
    "lint": ("bot.cli.lint_cmd:lint_command", "Check report files (or folders of them) against the format."),
    "sync": ("bot.cli.sync_cmd:sync_command", "Read the reports that changed since the last sync; store revisions."),
    "list": ("bot.cli.records_cmd:list_command", "List records, worst ratio first."),
    "show": ("bot.cli.records_cmd:show_command", "Show one record: facts, lint findings, history."),
    "new": ("bot.cli.new_cmd:new_command", "Create devs/issues/perf_SLUG.md from the template."),
    "serve": ("bot.cli.service_cmd:serve_command", "Run the webhook service, the worker and the scheduler."),
    "worker": ("bot.cli.service_cmd:worker_command", "Run only the worker and the scheduler."),
    "deliveries": ("bot.cli.service_cmd:deliveries_command", "List stored deliveries, newest first."),
    "redeliver": ("bot.cli.service_cmd:redeliver_command", "Queue a stored delivery to run again."),
    "dedup": ("bot.cli.dedup_cmd:dedup_command", "Is a draft report new, or does it duplicate one?"),
    "mcp": ("bot.cli.mcp_cmd:mcp_command", "Serve records, lint and dedup to agents over MCP (stdio, read-only)."),
    "verify": ("bot.cli.verify_cmd:verify_command", "Measure a report's claim, or a fix, on a runner."),
    "bisect": ("bot.cli.bisect_cmd:bisect_command", "Find the commit that made a report's program slow."),
    "demo": ("bot.cli.demo_cmd:demo_command", "Create the demo repository: a small C runtime and reports."),
    "digest": ("bot.cli.digest_cmd:digest_command", "Write the milestone digest for a week."),
    "app-manifest": ("bot.cli.manifest_cmd:manifest_command", "Print the GitHub App manifest perfbot needs."),
    "parity": ("bot.cli.parity_cmd:parity_command", "Check paired Metal/CUDA code (files or folders)."),
    "config": ("bot.cli.config_cmd:config_command", "Print the .perfbot.toml JSON Schema or its key reference."),
    "check": ("bot.cli.check_cmd:check_command", "Build and run every report once; say which key fixes what."),
    "init": ("bot.cli.init_cmd:init_command", "Write a commented .perfbot.toml guessed from the repository."),
}


class LazyGroup(click.Group):
    """A group whose commands are imported when they run (click's documented lazy-loading pattern), and whose
    help lists them from COMMANDS without importing any."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in COMMANDS:
            return None
        target, short = COMMANDS[cmd_name]
        module, attribute = target.split(":")
        command = getattr(importlib.import_module(module), attribute)
        if command.name != cmd_name:
            raise RuntimeError(f"{target} is named {command.name!r}, not {cmd_name!r}")
        command.short_help = short
        return command

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        with formatter.section("Commands"):
            formatter.write_dl([(name, COMMANDS[name][1]) for name in self.list_commands(ctx)])


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(package_name="perfbot")
def main() -> None:
    """perfbot keeps a performance campaign honest: reports in devs/issues/ become records.

    Exit codes: 0 success, 1 the command found problems (lint errors, unknown record),
    2 usage errors (bad options, missing files).
    """
