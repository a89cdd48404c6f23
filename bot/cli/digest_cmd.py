"""`perfbot digest`: the weekly digest of a repository's campaign, previewed (`--dry-run`) or posted now."""
from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import click

from bot.cli.common import db_option, reports_errors, settings_for


def _moment(value: str | None) -> datetime | None:
    if value is None:
        return None
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        raise click.BadParameter(f"{value!r} is not a date or time; "
                                 "write 2026-11-23 or 2026-11-23T09:00+01:00") from None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


@click.command("digest")
@click.option("--repo", "repo", default=".", show_default=True,
              help="Local mode: the repository's path. With GitHub settings: OWNER/NAME.")
@click.option("--since", default=None, help="Start of the window (default: [digest] window_days before now).")
@click.option("--dry-run", is_flag=True, help="Print the digest; post nothing, store nothing.")
@db_option
@reports_errors
def digest_command(repo: str, since: str | None, dry_run: bool, db_url: str | None) -> None:
    """New reports, merged duplicates, fixes and verdicts, stale reports, agents' quality and milestones."""
    from bot.adapters.git import local_full_name
    from bot.app.runtime import Runtime

    settings = settings_for(db_url)
    if settings.local_mode:
        path = Path(repo).resolve()
        settings = settings.__class__.from_env(database_url=db_url, local_repo=path)
        full_name = local_full_name(path)
    else:
        full_name = repo
    runtime = Runtime(settings)
    now = datetime.now(UTC)
    try:
        if dry_run:
            click.echo(runtime.services.lead.preview_digest(full_name, None, now, _moment(since)))
            return
        posted = runtime.services.lead.post_digest(full_name, None, now, since=_moment(since))
    finally:
        runtime.db.dispose()
    if posted is None:
        click.echo(f"{full_name}: this week's digest was posted already (`perfbot digest --dry-run` previews it)")
    else:
        click.echo(f"{full_name}: digest {posted['week']} posted as issue #{posted['issue']}")
