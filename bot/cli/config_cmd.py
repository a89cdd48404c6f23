"""`perfbot config`: the `.perfbot.toml` model seen from outside (its JSON Schema, for editors and the docs)."""
from __future__ import annotations

import json

import click

from bot.core.config import json_schema
from bot.core.config.reference import reference_markdown


@click.group("config")
def config_command() -> None:
    """The .perfbot.toml model."""


@config_command.command("schema")
def schema_command() -> None:
    """Print the JSON Schema of .perfbot.toml, exported from the model (for taplo / Even Better TOML)."""
    click.echo(json.dumps(json_schema(), indent=2, sort_keys=True))


@config_command.command("reference")
def reference_command() -> None:
    """Print the .perfbot.toml reference (markdown: every section and key), generated from the model."""
    click.echo(reference_markdown())
