"""`perfbot bisect`: find the first-parent commit that brought a report's claim back, measuring as it goes."""
from __future__ import annotations

from pathlib import Path

import click

from bot.adapters.git import GitRepository
from bot.adapters.runners import SshOptions, make_runner
from bot.bisect.flow import BisectFlow
from bot.cli.common import db_option, open_database, reports_errors, settings_for
from bot.services.bench.bench_flow import BenchFlow

EXIT = {"found": 0, "unresolved": 1, "error": 1}


class _Terminal:
    """No issue to comment on: the steps are printed instead."""

    def upsert_comment(self, *_args, **_kwargs):
        return None


@click.command("bisect")
@click.argument("slug")
@click.argument("good")
@click.argument("bad", required=False)
@click.option("--repo", "repo_path", default=".", show_default=True, type=click.Path(file_okay=False))
@click.option("--config", "config_file", default=None, type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="Try this file instead of the committed .perfbot.toml (its [build] script from the working tree).")
@db_option
@reports_errors
def bisect_command(slug, good, bad, repo_path, config_file, db_url) -> None:
    """Bisect the default branch's first-parent commits from GOOD (passing) to BAD (failing; default: the
    default branch), each step measured as `perfbot verify` measures. Exit 0 found, 1 not found, 2 usage."""
    settings = settings_for(None)

    def runner(conf, path, config):
        return make_runner(conf, path, settings.instance_dir / "bench" / conf.name, config,
                           SshOptions.from_settings(settings), private=settings.private_folders(),
                         secrets=settings.secret_values())

    def show(step: dict) -> None:
        interval = step["interval"]
        ratio = f"{interval['point']:.2f}x [{interval['low']:.2f}, {interval['high']:.2f}]" if interval else "-"
        click.echo(f"{step['sha'][:12]}  {step['mark']:<8} {ratio}  {step['pairs']} pairs  ({step['found']})")

    repo = GitRepository(repo_path)
    try:
        with open_database(db_url) as db:
            bench = BenchFlow(db, runner, operator=settings.operator)
            flow = BisectFlow(db, bench, lambda _delivery: True)  # run here, not queued
            if config_file is not None:
                click.echo(f"configuration: {config_file}", err=True)
            bisect_id = flow.start(repo, repo.full_name, slug, good, bad or repo.default_ref(), requested_by="",
                                   installation_id=None, config_file=config_file)
            row = flow.run(bisect_id, repo, _Terminal(), lambda _seconds: None, on_step=show, config_file=config_file)
    finally:
        repo.close()
    if row is None:
        raise click.ClickException(f"bisection {bisect_id} is no longer stored")
    click.echo(f"{row['outcome']}: {row['message']}" + (f"\nculprit {row['culprit']}" if row["culprit"] else ""))
    raise SystemExit(EXIT.get(row["outcome"], 1))
