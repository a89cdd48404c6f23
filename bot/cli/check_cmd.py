"""`perfbot check`: build with the configured runner, run every report's programs once, say what to fix."""
from __future__ import annotations

from pathlib import Path

import click

from bot.adapters.git import GitRepository
from bot.adapters.runners import SshOptions, make_runner
from bot.cli.common import reports_errors, settings_for
from bot.core.config.lines import key_lines
from bot.core.reports.parse import parse
from bot.errors import UserError
from bot.services.adopt.check import CheckResult, check
from bot.services.bench.bench_inputs import CONFIG_FILE, bench_config, source_of


def _yes(value: bool | None) -> str:
    return "-" if value is None else "yes" if value else "NO"


def _seconds(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}s"


def render(result: CheckResult) -> list[str]:
    lines = [f"build at {result.sha[:12]}: {'yes' if result.built else 'NO'}"]
    if not result.built:
        return lines + [f"  {result.build_problem}"] + [_shown("fix", fix) for fix in result.build_fixes]
    if not result.reports:
        return [*lines, "no reports in devs/issues/ yet: write one with `perfbot new`"]
    width = max(len(r.slug) for r in result.reports)
    lines.append(f"{'report':<{width}}  runs  equal  metrics  language       C")
    for r in result.reports:
        metrics = "-" if r.metrics is None else ("yes" if r.metrics else "NO")
        lines.append(f"{r.slug:<{width}}  {_yes(r.runs):<4}  {_yes(r.equal):<5}  {metrics:<7}  "
                     f"{_seconds(r.language_seconds):>8}  {_seconds(r.c_seconds):>6}")
    for r in result.reports:
        if r.problem:
            lines.append(f"{r.slug}: {r.problem}")
        lines += [_shown("fix", fix) for fix in r.fixes] + [_shown("note", note) for note in r.notes]
    return lines


def _shown(kind: str, text: str) -> str:
    """The first line says what to do; the rest is text to paste, indented so it stands apart."""
    first, *rest = text.split("\n")
    return "\n".join([f"  {kind}: {first}", *(f"        {line}" if line else "" for line in rest)])


@click.command("check")
@click.option("--repo", "repo_path", default=".", show_default=True, type=click.Path(file_okay=False))
@click.option("--config", "config_file", default=None, type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="Try this file instead of the committed .perfbot.toml (its [build] script from the working tree).")
@click.option("--revision", default=None, help="Build and run at this commit instead of the default branch "
              "(does an older commit still build?).")
@click.option("--runner", "runner_name", default=None, help="A runner named in .perfbot.toml (default: the c one).")
@reports_errors
def check_command(repo_path, config_file, revision, runner_name) -> None:
    """Exit 0 when everything builds, runs and agrees; 1 with the fixes to make; 2 usage."""
    settings = settings_for(None)
    repo = GitRepository(repo_path)
    try:
        source = source_of(repo, None, config_file)
        text = config_file.read_text(encoding="utf-8") if config_file else \
            (repo.read_file(source.sha, CONFIG_FILE) or b"").decode("utf-8", "replace")
        config = bench_config(repo, source, settings.operator)
        sha = repo.resolve(revision) if revision else source.sha
        changes, _ = repo.snapshot(source.sha)
    except UserError as exc:
        raise click.ClickException(str(exc).replace("cannot verify", "cannot check")) from None
    finally:
        repo.close()
    # A snapshot's changes are additions: each carries its data.
    records = [r for r in (parse(c.path, c.data or b"", config.reading).record for c in changes) if r is not None]
    conf = (next((r for r in config.runners if r.name == runner_name), None) if runner_name
            else config.runner_for("c") or config.runners[0])
    if conf is None:
        raise click.UsageError(f"no runner named {runner_name} in the instance file's [[runners]]")
    click.echo(f"configuration: {source.describe()}; runner {conf.name}", err=True)
    try:
        runner = make_runner(conf, repo.path, settings.instance_dir / "bench" / conf.name, config,
                             SshOptions.from_settings(settings), private=settings.private_folders(),
                             secrets=settings.secret_values())
        result = check(config, key_lines(text), runner, sha, records, older=revision is not None)
    except UserError as exc:
        raise click.ClickException(str(exc)) from None
    click.echo("\n".join(render(result)))
    raise SystemExit(0 if result.ok else 1)
