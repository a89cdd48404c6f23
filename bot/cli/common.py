"""What several commands share: the --db option, opening the store, the agent's fact review, clean errors."""
from __future__ import annotations

import functools
from collections.abc import Iterator
from contextlib import contextmanager

import click

from bot.adapters.git import GitError
from bot.adapters.store.engine import Database, StoreError
from bot.config import ConfigError, Settings
from bot.core import refusals
from bot.errors import TransientError, UserError

db_option = click.option(
    "--db", "db_url", metavar="URL", default=None,
    help="Database URL (default: $PERFBOT_DATABASE_URL, else a SQLite file in the instance folder).",
)


def settings_for(db_url: str | None) -> Settings:
    try:
        return Settings.from_env(database_url=db_url)
    except ConfigError as exc:
        raise click.UsageError(str(exc)) from None


@contextmanager
def open_database(db_url: str | None) -> Iterator[Database]:
    settings = settings_for(db_url)
    try:
        db = Database(settings.database_url)
    except StoreError as exc:
        raise click.ClickException(str(exc)) from None
    try:
        yield db
    finally:
        db.dispose()


def agent_fact_review(settings: Settings, db: Database):
    """The agent reviewer's fact review when an API key is set, else None. Imported only then: the anthropic SDK
    takes over a second to load, and agents run `perfbot lint` and `perfbot sync` offline all day."""
    if not settings.anthropic_api_key:
        return None
    from bot.adapters.reviewers import reviewer_for
    from bot.services.reports.fact_review import fact_review_for

    return fact_review_for(reviewer_for(settings), db)


class Refused(click.ClickException):
    """A refusal on the terminal: `error:` and `fix:` lines (refusals.cli) on stderr, exit code 1."""

    def __init__(self, refusal: UserError) -> None:
        super().__init__(str(refusal))
        self.refusal = refusal

    def show(self, file=None) -> None:
        click.echo(refusals.cli(self.refusal), err=True, file=file)


def reports_errors(func):
    """Turn a refusal into its `error:`/`fix:` lines, and the adapters' other user-facing errors and outages
    (an unreachable bench host is worth a sentence, not a traceback) into one line; exit code 1."""

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        try:
            return func(*args, **kwargs)
        except UserError as exc:
            raise Refused(exc) from None
        except (GitError, StoreError, ConfigError, TransientError) as exc:
            raise click.ClickException(str(exc)) from None

    return wrapper
