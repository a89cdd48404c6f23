"""`perfbot serve`, `perfbot worker`, `perfbot deliveries` and `perfbot redeliver`: running the service."""
from __future__ import annotations

import json
import signal
from pathlib import Path

import click

from bot.adapters.store.queue import DONE, FAILED, PENDING, RUNNING, DeliveryQueue
from bot.cli.common import db_option, open_database, reports_errors
from bot.config import ConfigError, Settings, parse_bind
from bot.errors import Busy, NotFound

SERVE_THREADS = 8  # waitress's request threads: a delivery stuck on the store holds one (webhook.ACK_WAIT_SECONDS)


def _settings(db_url: str | None, repo: str | None) -> Settings:
    try:
        return Settings.from_env(database_url=db_url, local_repo=Path(repo).resolve() if repo else None)
    except ConfigError as exc:
        raise click.UsageError(str(exc)) from None


def _stop_on_sigterm() -> None:
    def stop(_signum, _frame):
        raise KeyboardInterrupt
    signal.signal(signal.SIGTERM, stop)


def _logging(settings: Settings) -> None:
    """PERFBOT_LOG_FORMAT (text or json) and PERFBOT_LOG_LEVEL on stderr, the settings' secrets masked."""
    from bot.app.logs import configure_logging

    try:
        configure_logging(settings)
    except ConfigError as exc:
        raise click.UsageError(str(exc)) from None


@click.command("serve")
@click.option("--repo", default=None, type=click.Path(exists=True, file_okay=False),
              help="Local mode: the git repository to watch (new commits on its branch act as pushes).")
@click.option("--workers", type=click.IntRange(1, 32), default=1, show_default=True, help="Worker threads.")
@db_option
@reports_errors
def serve_command(repo: str | None, workers: int, db_url: str | None) -> None:
    """Run the webhook service, the worker and the scheduler in one process (address: $PERFBOT_BIND)."""
    from waitress import serve

    from bot.app.runtime import Runtime

    settings = _settings(db_url, repo)
    try:
        settings.require_webhook_secret()
    except ConfigError as exc:
        raise click.UsageError(str(exc)) from None
    _logging(settings)
    runtime = Runtime(settings, workers=workers, web_threads=SERVE_THREADS)
    host, port = parse_bind(settings.bind)
    if settings.local_mode:
        mode = f"local mode, watching {settings.local_repo}" if settings.local_repo else \
            "local mode, watching no repository: pass --repo PATH"
    else:
        mode = f"GitHub at {settings.github_api_url}"
    click.echo(f"perfbot serving on http://{settings.bind} ({mode}); dashboard http://{settings.bind}/dashboard/; "
               f"store {runtime.db.safe_url}", err=True)
    _stop_on_sigterm()
    runtime.start_background()
    try:
        serve(runtime.app, host=host, port=port, threads=SERVE_THREADS, ident="perfbot", _quiet=True)
    except KeyboardInterrupt:
        pass
    except OSError as exc:  # the address is taken or not ours: say which and how to choose another
        raise click.ClickException(f"cannot listen on {settings.bind}: {exc.strerror}; "
                                   "set PERFBOT_BIND=HOST:PORT") from None
    finally:
        runtime.stop()


@click.command("worker")
@click.option("--workers", type=click.IntRange(1, 32), default=1, show_default=True, help="Worker threads.")
@click.option("--metrics-bind", default=None, metavar="HOST:PORT",
              help="Serve this worker's /healthz, /readyz and /metrics (its GitHub calls and jobs), e.g. 0.0.0.0:9101.")
@db_option
@reports_errors
def worker_command(workers: int, metrics_bind: str | None, db_url: str | None) -> None:
    """Run only the worker (and the scheduler), for deployments that separate web and workers."""
    from bot.app.health import serve_worker_health
    from bot.app.runtime import Runtime
    from bot.config import ConfigError, parse_bind

    metrics_address = None
    if metrics_bind:  # checked before anything starts: a typo must not leave a migrated store and no metrics
        try:
            metrics_address = parse_bind(metrics_bind)
        except ConfigError:
            raise click.UsageError(f"--metrics-bind {metrics_bind!r} is not HOST:PORT, e.g. 0.0.0.0:9101") from None
    settings = _settings(db_url, None)
    _logging(settings)
    runtime = Runtime(settings, workers=workers)
    if metrics_address:
        # The web process cannot see this process's counters: a split deployment scrapes each worker too, and
        # an orchestrator asks each worker whether it is alive and ready (its store takes a write, its threads run).
        try:
            serve_worker_health(metrics_address[0], metrics_address[1], runtime.ready, runtime.metrics)
        except OSError as exc:
            runtime.stop()
            raise click.ClickException(f"cannot serve metrics on {metrics_bind}: {exc.strerror}") from None
    _stop_on_sigterm()
    runtime.start_background()
    click.echo(f"perfbot worker running ({workers} thread(s)); store {runtime.db.safe_url}", err=True)
    try:
        while not runtime.stop_event.wait(1.0):
            pass
    except KeyboardInterrupt:
        pass
    finally:
        runtime.stop()


@click.command("deliveries")
@click.option("--status", "statuses", multiple=True, type=click.Choice([PENDING, RUNNING, DONE, FAILED]),
              help="Only deliveries in these states (repeatable; default: all).")
@click.option("--limit", type=click.IntRange(1, 10000), default=50, show_default=True)
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@db_option
@reports_errors
def deliveries_command(statuses, limit, fmt, db_url) -> None:
    """List stored deliveries, newest first, with their errors."""
    with open_database(db_url) as db:
        rows = DeliveryQueue(db).listing(tuple(statuses), limit)
    if fmt == "json":
        click.echo(json.dumps(rows, indent=2))
        return
    for row in rows:
        action = f".{row['action']}" if row["action"] else ""
        click.echo(f"{row['id']:<38} {row['event'] + action:<28} {row['status']:<8} "
                   f"attempts {row['attempts']}  {row['received_at'][:19]}  {row['repo'] or ''}")
        if row["error"]:
            click.echo(f"    error: {row['error']}")
    click.echo(f"{len(rows)} delivery(ies)")


@click.command("redeliver")
@click.argument("delivery_id")
@db_option
@reports_errors
def redeliver_command(delivery_id: str, db_url: str | None) -> None:
    """Queue a stored delivery to run again (the worker picks it up)."""
    with open_database(db_url) as db:
        queue = DeliveryQueue(db)
        found = queue.get(delivery_id)
        if found is None:
            raise NotFound(f"no delivery {delivery_id!r}", "`perfbot deliveries` lists them", name=delivery_id)
        if not queue.redeliver(delivery_id):
            raise Busy(f"delivery {delivery_id} is running right now", waiting_for="it to finish")
    click.echo(f"queued {delivery_id} ({found['event']}) to run again")
