"""`perfbot config`: the `.perfbot.toml` model seen from outside (its JSON Schema, for editors and the docs)."""
from __future__ import annotations

import json

import click

from bot.core.config import json_schema


@click.group("config")
def config_command() -> None:
    """The .perfbot.toml model."""


@config_command.command("schema")
def schema_command() -> None:
    """Print the JSON Schema of .perfbot.toml, exported from the model (for taplo / Even Better TOML)."""
    click.echo(json.dumps(json_schema(), indent=2, sort_keys=True))
