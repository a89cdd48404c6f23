"""`perfbot mcp`: serve the records, the linter and dedup to agents over the Model Context Protocol (stdio)."""
from __future__ import annotations

import click

from bot.adapters.reviewers import reviewer_for
from bot.cli.common import db_option, open_database, reports_errors, settings_for


@click.command("mcp")
@click.option("--repo", "repo_path", default=".", show_default=True, type=click.Path(file_okay=False),
              help="The repository whose records are served (as `perfbot sync --repo` stored them).")
@db_option
@reports_errors
def mcp_command(repo_path: str, db_url: str | None) -> None:
    """Run an MCP server on stdin/stdout: search_reports, show_report, lint_draft, dedup_draft and
    verification_status, read-only. Configure it in an agent's .mcp.json (docs/agents.md)."""
    from bot.mcp.catalog import Catalog  # the SDK and the index load only when the server runs
    from bot.mcp.server import build_server

    with open_database(db_url) as db:
        catalog = Catalog.open(db, repo_path)
        catalog.current()  # build the index before the first call, not during it
        build_server(catalog, reviewer_for(settings_for(db_url))).run("stdio")
