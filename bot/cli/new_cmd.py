"""`perfbot new`: scaffold a report that already lints clean, for an agent to fill in."""
from __future__ import annotations

from pathlib import Path

import click

from bot.adapters.templates import render
from bot.cli.common import reports_errors
from bot.core.config import ConfigFileError, PerfbotFile, fill, parse_repo_config
from bot.core.lint.rules import lint
from bot.core.reports.codeblocks import LANGUAGE_TAGS
from bot.core.reports.parse import parse
from bot.core.reports.records import BACKENDS, SEQ_TOLERANCE, SLUG_RE, TRACKS, ReadingOptions
from bot.errors import Invalid

# Placeholder timings consistent with the requested ratio, so the scaffold's table agrees with its claim.
C_SECONDS = 0.50
ONE_THREAD_SECONDS = 8.00


def scaffold(slug: str, track: str, backend: str, threads: int, ratio: float, title: str,
             config: PerfbotFile | None = None) -> str:
    times = (
        {"c_seconds": C_SECONDS, "lang_seconds": round(C_SECONDS * ratio, 3)}
        if track == "seq"
        else {"t1_seconds": ONE_THREAD_SECONDS, "tn_seconds": round(ONE_THREAD_SECONDS * ratio / threads, 3)}
    )
    new = config.new if config is not None else None
    example = _example(config, threads) if config is not None and new is not None else None
    block = (f"```{example['tag']}\n{new.program}\n```\n\n```c\n{new.translation}\n```\n\n"
             f"Both print `{new.prints}`.") if example and new else ""
    return render("report_new.md.j2", slug=slug, title=title, track=track, backend=backend,
                  threads=threads, ratio=ratio, example=example, example_block=block, **times)


def _example(config: PerfbotFile, threads: int) -> dict:
    """The fence tag and the commands a person runs, from `[run]`: the fence is the runtime's own tag (`[run]
    fence`), else the program file's extension when the parser knows it as a language."""
    program = config.run.program or "program.bend"
    extension = program.rsplit(".", 1)[-1]
    tag = config.reading.language_fence() or (extension if extension in LANGUAGE_TAGS else LANGUAGE_TAGS[0])
    language = config.run.language or ("./runtime", "{file}")
    command = lambda n: " ".join(a for a in fill(language, file=program, threads=str(n), input="") if a)  # noqa: E731
    return {"tag": tag, "command": command(1), "command_1": command(1), "command_n": command(threads)}


def _config(folder: Path) -> PerfbotFile | None:
    """The `.perfbot.toml` of the repository the report goes into (its working tree), if it has one."""
    for place in (folder.resolve(), *folder.resolve().parents):
        if (place / ".perfbot.toml").is_file():
            try:
                return parse_repo_config((place / ".perfbot.toml").read_text(encoding="utf-8"))
            except ConfigFileError as exc:
                raise Invalid(exc.problem, at=str(place / ".perfbot.toml"), line=exc.line, key=exc.key) from None
        if (place / ".git").exists():
            return None
    return None


def normalise_slug(raw: str) -> str:
    slug = raw if raw.startswith("perf_") else f"perf_{raw}"
    if not SLUG_RE.fullmatch(slug):
        raise click.BadParameter(f"{raw!r}: use lowercase letters, digits and underscores, e.g. perf_nested_match",
                                 param_hint="SLUG")
    return slug


@click.command("new")
@click.argument("slug")
@click.option("--track", type=click.Choice(TRACKS), required=True)
@click.option("--backend", type=click.Choice(BACKENDS), default=None, help="Default: c.")
@click.option("--threads", type=click.IntRange(min=1), default=None, help="par: the thread count the claim is about.")
@click.option("--ratio", type=click.FloatRange(min=0, min_open=True), default=None,
              help="seq: language time / C time; par: ideal / achieved speedup.")
@click.option("--title", default=None, help="One line saying what is slow.")
@click.option("--dir", "folder", default="devs/issues", show_default=True, type=click.Path(file_okay=False))
@reports_errors
def new_command(slug, track, backend, threads, ratio, title, folder) -> None:
    """Create devs/issues/perf_SLUG.md from the template, ready to fill in."""
    slug = normalise_slug(slug)
    backend = backend or "c"
    if track == "seq" and backend != "c":
        raise click.BadParameter("seq reports compare against C at one thread; use --backend c", param_hint="--backend")
    threads = threads or (1 if track == "seq" else 8)
    ratio = ratio if ratio is not None else (3.0 if track == "seq" else 2.0)
    if track == "seq" and ratio <= SEQ_TOLERANCE:
        raise click.BadParameter(f"{ratio}x is within the {SEQ_TOLERANCE}x tolerance: not an issue by the team's rule",
                                 param_hint="--ratio")
    title = title or slug.removeprefix("perf_").replace("_", " ").capitalize()
    path = Path(folder) / f"{slug}.md"
    if path.exists():
        raise Invalid(f"{path} already exists", "edit it, or pick another slug")
    config = _config(path.parent)
    text = scaffold(slug, track, backend, threads, ratio, title, config)
    reading = config.reading if config is not None else ReadingOptions()
    findings = lint(parse(str(path), text.encode(), reading), path=str(path), reading=reading)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    click.echo(f"created {path}")
    if config is not None and config.new is None:
        click.echo("  note: its example program is the format's own; add a [new] table to .perfbot.toml (program, "
                   "translation, prints) so new reports start from a program your runtime runs", err=True)
    for f in findings:
        click.echo(f"  note: line {f.line}: {f.rule}: {f.message}", err=True)
    click.echo("fill in the context, both programs, the measurements, root cause and fix; then `perfbot lint` it")
