"""The `perfbot` command line: one click group, one module per family of commands."""
from __future__ import annotations

import click

from bot.cli.bisect_cmd import bisect_command
from bot.cli.dedup_cmd import dedup_command
from bot.cli.demo_cmd import demo_command
from bot.cli.digest_cmd import digest_command
from bot.cli.lint_cmd import lint_command
from bot.cli.manifest_cmd import manifest_command
from bot.cli.new_cmd import new_command
from bot.cli.parity_cmd import parity_command
from bot.cli.records_cmd import list_command, show_command
from bot.cli.service_cmd import deliveries_command, redeliver_command, serve_command, worker_command
from bot.cli.sync_cmd import sync_command
from bot.cli.verify_cmd import verify_command


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(package_name="perfbot")
def main() -> None:
    """perfbot keeps a performance campaign honest: reports in devs/issues/ become records.

    Exit codes: 0 success, 1 the command found problems (lint errors, unknown record),
    2 usage errors (bad options, missing files).
    """


COMMANDS = (lint_command, sync_command, list_command, show_command, new_command,
            serve_command, worker_command, deliveries_command, redeliver_command, dedup_command,
            verify_command, bisect_command, demo_command, digest_command, manifest_command, parity_command)
for command in COMMANDS:
    main.add_command(command)
