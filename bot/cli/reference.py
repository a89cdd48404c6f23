"""Every command's help as one markdown page, read from the click commands themselves, so the documentation
site's Commands page cannot fall behind the options the commands accept."""
from __future__ import annotations

import click

from bot.cli import COMMANDS, main


def commands_markdown() -> str:
    # The width is fixed so the page does not depend on the terminal that built it.
    root = click.Context(main, info_name="perfbot", terminal_width=100, max_content_width=100,
                         help_option_names=["-h", "--help"])
    out = ["## `perfbot`", "", "```text", main.get_help(root), "```", ""]
    for name in main.list_commands(root):
        command = main.get_command(root, name)
        if command is not None:
            out += _command(command, click.Context(command, info_name=name, parent=root))
    return "\n".join(out)


def _command(command: click.Command, ctx: click.Context) -> list[str]:
    path = ctx.command_path
    summary = COMMANDS.get(ctx.info_name or "", ("", ""))[1] if ctx.parent and ctx.parent.parent is None else ""
    out = [f"## `{path}`", ""] + ([summary, ""] if summary else []) + ["```text", command.get_help(ctx), "```", ""]
    if isinstance(command, click.Group):
        for name in command.list_commands(ctx):
            sub = command.get_command(ctx, name)
            if sub is not None:
                out += _command(sub, click.Context(sub, info_name=name, parent=ctx))
    return out
