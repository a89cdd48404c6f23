"""`perfbot parity`: check that paired Metal/CUDA blocks have their twins and the same shape, before a PR does."""
from __future__ import annotations

import json
from pathlib import Path

import click

from bot.adapters.git import GitRepository
from bot.cli.common import reports_errors
from bot.core.config import ConfigFileError, ParityConfig, parse_repo_config
from bot.parity import view as parity_view
from bot.parity.check import check_change, check_files

SOURCE_SUFFIXES = {".h", ".hpp", ".hh", ".c", ".cc", ".cpp", ".cu", ".cuh", ".metal", ".m", ".mm"}


def load_parity(config_file: Path | None, root: Path | None) -> ParityConfig:
    """`--config`, else the `.perfbot.toml` at the repository root; without `[parity]`: markers, no mapping."""
    path = config_file or (root / ".perfbot.toml" if root else None)
    if path is None or not path.is_file():
        return ParityConfig()
    try:
        return parse_repo_config(path.read_text(encoding="utf-8")).parity
    except ConfigFileError as exc:
        raise click.UsageError(f"{path}: {str(exc).removeprefix('.perfbot.toml:')}") from None


def collect(paths: tuple[str, ...], root: Path | None, parity: ParityConfig) -> dict[str, Path]:
    """Name (repository-relative when inside one) -> file; a folder contributes the files `[parity]` covers."""
    found: dict[str, Path] = {}
    for raw in paths:
        path = Path(raw).resolve()
        if path.is_file():
            found[_name(path, root)] = path
            continue
        inside = sorted(p for p in path.rglob("*") if p.is_file() and ".git" not in p.parts)
        chosen = [p for p in inside if parity.covers(_name(p, root))] if parity.declared else \
            [p for p in inside if p.suffix in SOURCE_SUFFIXES]
        if not chosen:
            raise click.UsageError(f"{raw}: no files to check in this folder"
                                   + (" match [parity] files" if parity.declared else ""))
        found.update((_name(p, root), p) for p in chosen)
    return found


def _name(path: Path, root: Path | None) -> str:
    for base in (root, Path.cwd()):
        if base is not None and path.is_relative_to(base):
            return path.relative_to(base).as_posix()
    return path.as_posix()


@click.command("parity")
@click.argument("paths", nargs=-1, required=True, type=click.Path(exists=True))
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@click.option("--config", "config_file", type=click.Path(exists=True, dir_okay=False, path_type=Path), default=None,
              help="A .perfbot.toml to take [parity] from (default: the one at the repository root).")
@click.option("--base", default=None, help="A git ref to compare against: twins changed on one side only are "
              "flagged, as on a pull request.")
@reports_errors
def parity_command(paths: tuple[str, ...], fmt: str, config_file: Path | None, base: str | None) -> None:
    """Check paired Metal/CUDA code (files or folders). Exit 0: in step; 1: problems; 2: usage."""
    repo = GitRepository.containing(paths[0])
    try:
        root = repo.path if repo else None
        parity = load_parity(config_file, root)
        files = collect(paths, root, parity)
        texts = {name: path.read_text(encoding="utf-8", errors="replace") for name, path in files.items()}
        if base is None:
            report = check_files(texts, parity)
        else:
            if repo is None:
                raise click.UsageError("--base needs the files to be inside a git repository")
            sha = repo.resolve(base)
            before = {name: data.decode("utf-8", "replace") for name in texts
                      if (data := repo.read_file(sha, name)) is not None}
            report = check_change(before, texts, parity)
    finally:
        if repo is not None:
            repo.close()
    if fmt == "json":
        click.echo(json.dumps(parity_view.as_json(report), indent=2))
    else:
        click.echo(parity_view.render_text(report))
    raise SystemExit(0 if report.ok else 1)
