"""`perfbot lint`: tell an agent exactly what is wrong with its report files."""
from __future__ import annotations

import json
from pathlib import Path

import click
from sqlalchemy import select

from bot.adapters.git import GitRepository
from bot.adapters.store.engine import Database
from bot.adapters.store.models import SlugAlias
from bot.cli.common import db_option, reports_errors, settings_for
from bot.core.lint import lint
from bot.core.parse import parse


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


def history_slugs(files: list[Path], db_url: str | None) -> frozenset[str] | None:
    """Slugs history knows: the store's (when there is one) and every git history the files live in.

    None means no history is reachable, and then `supersedes` cannot be judged at all.
    """
    known: set[str] = set()
    reachable = False
    settings = settings_for(db_url)
    if db_url or not settings.uses_default_database or (settings.instance_dir / "perfbot.sqlite3").exists():
        db = Database(settings.database_url)
        try:
            with db.session() as session:
                known.update(session.scalars(select(SlugAlias.slug)))
            reachable = True
        finally:
            db.dispose()
    seen_repos: set[Path] = set()
    for file in files:
        repo = GitRepository.containing(file.parent)
        if repo is None or repo.path in seen_repos:
            continue
        seen_repos.add(repo.path)
        known.update(repo.slugs_ever())
        repo.close()
        reachable = True
    return frozenset(known) if reachable else None


def render_text(findings: list, n_files: int) -> str:
    lines = []
    for f in findings:
        lines.append(f"{f.file}:{f.line}: {f.severity.value} [{f.rule}] {f.message}")
        lines.append(f"    fix: {f.remedy}")
    errors = sum(1 for f in findings if f.is_error)
    lines.append(f"{n_files} file(s) checked: {errors} error(s), {len(findings) - errors} warning(s)")
    return "\n".join(lines)


@click.command("lint")
@click.argument("paths", nargs=-1, required=True, type=click.Path(exists=True))
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@click.option("--word-budget", type=click.IntRange(min=1), default=500, show_default=True,
              help="Most words of prose (code and tables excluded) a report may have.")
@db_option
@reports_errors
def lint_command(paths: tuple[str, ...], fmt: str, word_budget: int, db_url: str | None) -> None:
    """Check report files (or folders of them). Exit 0: no errors; 1: errors; 2: usage."""
    files = collect_files(paths)
    known = history_slugs(files, db_url)
    findings = []
    for file in files:
        try:
            data = file.read_bytes()
        except OSError as exc:
            raise click.UsageError(f"{file}: cannot read ({exc.strerror})") from None
        findings.extend(lint(parse(str(file), data), path=str(file), known_slugs=known, word_budget=word_budget))
    if fmt == "json":
        click.echo(json.dumps([f.as_dict() for f in findings], indent=2))
    else:
        click.echo(render_text(findings, len(files)))
    raise SystemExit(1 if any(f.is_error for f in findings) else 0)
