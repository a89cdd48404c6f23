"""`perfbot sync`: bring the store up to a ref of a git repository."""
from __future__ import annotations

import sys

import click

from bot.adapters.git import GitRepository
from bot.cli.common import agent_fact_review, db_option, open_database, reports_errors, settings_for
from bot.services.reports.sync import sync


@click.command("sync")
@click.option("--repo", "repo_path", default=".", show_default=True, type=click.Path(file_okay=False),
              help="Path of the git repository (a clone; its working directory is never read).")
@click.option("--ref", default=None, help="Branch, tag or commit to sync to (default: the checked-out branch); "
                                          "never one older than the stored head.")
@click.option("--history", is_flag=True, help="Replay every commit from the root to backfill every revision.")
@db_option
@reports_errors
def sync_command(repo_path: str, ref: str | None, history: bool, db_url: str | None) -> None:
    """Read the reports that changed since the last sync and store new revisions."""
    git_repo = GitRepository(repo_path)
    bar = None

    def on_plan(total: int) -> None:
        nonlocal bar
        if total:
            bar = click.progressbar(length=total, label="syncing reports", file=sys.stderr)
            bar.__enter__()

    try:
        with open_database(db_url) as db:
            summary = sync(db, git_repo, ref=ref, history=history, on_plan=on_plan,
                           on_progress=lambda n: bar.update(n) if bar else None,
                           facts=agent_fact_review(settings_for(db_url), db))
    finally:
        if bar is not None:
            bar.__exit__(None, None, None)
        git_repo.close()

    for path in summary.ignored:
        click.echo(f"warning: {path}: ignored, not a report name (devs/issues/perf_[a-z0-9_]+.md)", err=True)
    counts = ", ".join(f"{n} {kind}" for kind, n in sorted(summary.counts.items())) or "no report changes"
    if summary.passed_over:
        click.echo(f"note: {summary.passed_over[:12]} is not newer than the stored head; the checked-out branch's "
                   f"tip {summary.head[:12]} decides", err=True)
    since = f" from {summary.previous[:12]}" if summary.previous else ""
    click.echo(f"{summary.repo}: {summary.mode}{since} to {summary.head[:12]}, {summary.commits} commit(s): {counts}")
