"""`perfbot lint`: tell an agent exactly what is wrong with its report files."""
from __future__ import annotations

import dataclasses
import json
from collections.abc import Sequence
from pathlib import Path

import click

from bot.adapters.store.engine import Database
from bot.cli.common import agent_fact_review, db_option, reports_errors, settings_for
from bot.core.reports.records import ReadingOptions, Severity
from bot.services.reports.fact_review import FactReview
from bot.services.reports.lint_reports import UnreadableReport, history_slugs, lint_files


def collect_files(paths: tuple[str, ...]) -> list[Path]:
    files: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            found = sorted(p for p in path.rglob("*.md") if p.is_file())
            if not found:
                raise click.UsageError(f"{raw}: no .md files in this folder")
            files.extend(found)
        else:
            files.append(path)
    return files


def store_if_any(db_url: str | None) -> Database | None:
    """The store to ask about history: one named explicitly, or the default one if it already exists."""
    settings = settings_for(db_url)
    if db_url or not settings.uses_default_database or (settings.instance_dir / "perfbot.sqlite3").exists():
        return Database(settings.database_url)
    return None


def agent_facts(db: Database | None, db_url: str | None) -> tuple[FactReview | None, Database | None]:
    """With an API key, the agent reviewer for facts the offline reading leaves open, and the store that
    caches its answers (the default one, created if need be); offline, neither."""
    settings = settings_for(db_url)
    if not settings.anthropic_api_key:
        return None, None
    cache_db = db or Database(settings.database_url)
    return agent_fact_review(settings, cache_db), cache_db


def render_text(findings: list, n_files: int, agent_notes: Sequence[tuple[str, str]] = ()) -> str:
    lines = [f"{file}: note [agent-facts] {note}" for file, note in agent_notes]
    for f in findings:
        lines.append(f"{f.file}:{f.line}: {f.severity.value} [{f.rule}] {f.message}")
        lines.append(f"    fix: {f.remedy}")
    errors = sum(1 for f in findings if f.is_error)
    notes = sum(1 for f in findings if f.severity is Severity.NOTE)
    lines.append(f"{n_files} file(s) checked: {errors} error(s), {len(findings) - errors - notes} warning(s)"
                 + (f", {notes} note(s)" if notes else ""))
    return "\n".join(lines)


@click.command("lint")
@click.argument("paths", nargs=-1, required=True, type=click.Path(exists=True))
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@click.option("--word-budget", type=click.IntRange(min=1), default=500, show_default=True,
              help="Most words of prose (code and tables excluded) a report may have.")
@click.option("--reference-factor", type=click.FloatRange(min=0, min_open=True), default=None,
              help="[verify] reference_factor: a `reference:` report must be slower than the reference by more "
                   "(default: the repository's .perfbot.toml, else 1.0).")
@db_option
@reports_errors
def lint_command(paths: tuple[str, ...], fmt: str, word_budget: int, reference_factor: float | None,
                 db_url: str | None) -> None:
    """Check report files (or folders of them). Exit 0: no errors; 1: errors; 2: usage."""
    files = collect_files(paths)
    reading = repository_reading(Path(files[0]) if files else Path.cwd())
    if reference_factor is not None:
        reading = dataclasses.replace(reading, reference_factor=reference_factor)
    db = store_if_any(db_url)
    facts, cache_db = agent_facts(db, db_url)
    notes: list[tuple[str, str]] = []
    try:
        findings = lint_files(files, history_slugs(files, db), word_budget, facts, notes, reading)
    except UnreadableReport as exc:
        raise click.UsageError(str(exc)) from None
    finally:
        if db is not None:
            db.dispose()
        if cache_db is not None and cache_db is not db:
            cache_db.dispose()
    if fmt == "json":
        for file, note in notes:  # the array on stdout stays findings only
            click.echo(f"{file}: note [agent-facts] {note}", err=True)
        click.echo(json.dumps([f.as_dict() for f in findings], indent=2))
    else:
        click.echo(render_text(findings, len(files), notes))
    raise SystemExit(1 if any(f.is_error for f in findings) else 0)


def repository_reading(start: Path) -> ReadingOptions:
    """How the `.perfbot.toml` at the root of the repository `start` is in reads reports (its fence tags, its
    reference factor), as sync reads them; the defaults where there is none. A file that does not parse is an
    error that names its line."""
    for folder in (start.resolve(), *start.resolve().parents):
        config = folder / ".perfbot.toml"
        if config.is_file():
            from bot.core.config import ConfigFileError, parse_repo_config  # pydantic loads only when needed

            try:
                return parse_repo_config(config.read_text(encoding="utf-8")).reading
            except ConfigFileError as exc:
                raise click.UsageError(f"{config}:{exc.line}: {exc.key}: {exc.problem}") from None
        if (folder / ".git").exists():
            break
    return ReadingOptions()
