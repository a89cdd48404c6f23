"""`perfbot check`: build with the configured runner, run every report's programs once, say what to fix."""
from __future__ import annotations

import re
from pathlib import Path

import click

from bot.adapters.git import GitRepository
from bot.adapters.runners import SshOptions, make_runner
from bot.cli.common import reports_errors, settings_for
from bot.core.config.lines import key_lines
from bot.core.reports.parse import parse
from bot.services.adopt.check import CheckResult, check
from bot.services.bench.bench_inputs import CONFIG_FILE, bench_config, source_of


def _yes(value: bool | None) -> str:
    return "-" if value is None else "yes" if value else "NO"


def _seconds(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}s"


def render(result: CheckResult) -> list[str]:
    if not result.build_configured:
        lines = [f"build at {result.sha[:12]}: nothing built (no [build] command or script; `perfbot init` guesses "
                 "one)"]
    else:
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
        lines += [_shown("warning", warning) for warning in r.warnings]
        lines += [_shown("fix", fix) for fix in r.fixes] + [_shown("note", note) for note in r.notes]
    return lines + [_shown("fix", fix) for fix in result.build_fixes]


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
@click.option("--write-script", "write_script", default=None, metavar="PATH",
              help="Write the per-revision build script check proposes to PATH (in the repository) and point "
              "[build] at it in the working tree's .perfbot.toml.")
@click.option("--runner", "runner_name", default=None, help="A runner named in .perfbot.toml (default: the c one).")
@reports_errors
def check_command(repo_path, config_file, revision, write_script, runner_name) -> None:
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
    except BaseException:  # a refusal before the run: reports_errors prints it; the clone is closed first
        repo.close()
        raise

    def introduced(text: str) -> str | None:
        found = repo.introduced(text, sha, source.sha)
        return f"{found.sha[:12]} ({found.summary[:60]})" if found else None
    # A snapshot's changes are additions: each carries its data.
    records = [r for r in (parse(c.path, c.data or b"", config.reading).record for c in changes) if r is not None]
    conf = (next((r for r in config.operator.runners if r.name == runner_name), None) if runner_name
            else config.runner_for("c") or config.operator.runners[0])
    if conf is None:
        raise click.UsageError(f"no runner named {runner_name} in the instance file's [[runners]]")
    click.echo(f"configuration: {source.describe()}; runner {conf.name}", err=True)
    try:
        runner = make_runner(conf, repo.path, settings.instance_dir / "bench" / conf.name, config,
                             SshOptions.from_settings(settings), private=settings.private_folders(),
                             secrets=settings.secret_values())
        result = check(config, key_lines(text), runner, sha, records, older=revision is not None and sha != source.sha,
                       introduced=introduced)
    finally:
        repo.close()
    if not text.strip() and config_file is None:
        click.echo(f"no {CONFIG_FILE} at {source.sha[:12]}: `perfbot init` writes one (what follows uses the defaults)")
    click.echo("\n".join(render(result)))
    if write_script:
        click.echo(_written(Path(repo.path), write_script, result.script, config_file))
    raise SystemExit(0 if result.ok else 1)


def _written(root: Path, relative: str, script: str | None, config_file: Path | None) -> str:
    """The proposed script written, and `[build] command` replaced by `script = ...`: the two edits the fix
    asks for, done as it says."""
    if script is None:
        return "wrote nothing: check proposes no build script here"
    target = (root / relative).resolve()
    if Path(relative).is_absolute() or not target.is_relative_to(root.resolve()) or \
            not re.fullmatch(r"[A-Za-z0-9._/-]+", relative):
        raise click.UsageError(f"--write-script {relative}: give a path inside the repository")
    config = config_file or root / CONFIG_FILE
    lines = config.read_text(encoding="utf-8").splitlines(keepends=True) if config.exists() else []
    index = key_lines("".join(lines))
    at = index.get(("build", "command")) if index else None
    if at is None or "]" not in lines[at - 1]:
        return f"not written: {config} has no one-line [build] command to replace with script = \"{relative}\""
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(script, encoding="utf-8")
    target.chmod(0o755)
    lines[at - 1] = f'script = "{Path(relative).as_posix()}"   # builds every revision (was: {lines[at - 1].strip()})\n'
    config.write_text("".join(lines), encoding="utf-8")
    return f"wrote {relative}; {config.name}:{at} now reads script = \"{Path(relative).as_posix()}\""
