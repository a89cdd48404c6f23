"""`perfbot init`: write a commented `.perfbot.toml` from what the repository and its runtime say."""
from __future__ import annotations

from pathlib import Path

import click

from bot.cli.common import reports_errors, settings_for
from bot.errors import Invalid
from bot.services.adopt.init import init


@click.command("init")
@click.option("--repo", "repo_path", default=".", show_default=True, type=click.Path(file_okay=False, exists=True))
@click.option("--force", is_flag=True, help="Replace an existing .perfbot.toml.")
@reports_errors
def init_command(repo_path, force) -> None:
    """Find the build, the runtime and its flags; write .perfbot.toml (TODO lines for what was not found)."""
    target = Path(repo_path) / ".perfbot.toml"
    if target.exists() and not force:
        raise Invalid(f"{target} exists", "check it with `perfbot check`, or pass --force to replace it")
    settings = settings_for(None)
    result = init(Path(repo_path).resolve(), settings.instance_dir / "bench" / "init")
    target.write_text(result.text, encoding="utf-8")
    for line in result.guesses:
        click.echo(line if line.startswith(("note: ", "tried ")) else f"guessed {line}")
    todo = sum(1 for line in result.text.splitlines() if line.startswith("# TODO"))
    click.echo(f"wrote {target}" + (f" ({todo} TODO line{'s' if todo > 1 else ''} to fill in)" if todo else "")
               + f"; next: perfbot check --repo {repo_path} --config {target}")
    raise SystemExit(0 if result.built else 1)
