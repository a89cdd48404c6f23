"""`perfbot demo PATH`: make a self-contained repository to try perfbot on, verification included."""
from __future__ import annotations

import shlex
import shutil
from pathlib import Path

import click

from bot.cli.common import reports_errors
from bot.demo import create_demo
from bot.demo.parity import KERNELS_PATH, PARITY_BRANCH

WHAT = {
    "runtime.c": "a tiny interpreter standing in for the language runtime",
    ".perfbot.toml": "how perfbot builds it and runs a report's two programs",
    "README.md": "what is where, and the commands below",
    KERNELS_PATH: "GPU kernels as Metal/CUDA twins (the parity guard)",
}


@click.command("demo")
@click.argument("path", type=click.Path(path_type=Path))
@click.option("--runtime", "runtime", is_flag=True, help="Create instead the runtime docs/adopt.md adopts perfbot "
              "on (no .perfbot.toml yet).")
@reports_errors
def demo_command(path: Path, runtime: bool) -> None:
    """Create a demo git repository at PATH (a new or empty folder): a small C runtime, reports about it,
    and a fix branch that really removes one reported slowdown."""
    if runtime:
        _runtime(path)
        return
    info = create_demo(path)
    click.echo(f"created a demo repository in {path}")
    for name in info.files:
        note = WHAT.get(name)
        if name == f"devs/issues/{info.fixed_slug}.md":
            note = f"a report whose fix is on branch {info.fix_branch}"
        elif name == f"devs/issues/{info.open_slug}.md":
            note = "a report with no fix yet"
        elif name == f"devs/issues/{info.merged_slug}.md":
            note = f"a report fixed in main by {info.merged_fix[:12]}, which its fix: names"
        elif name == f"devs/issues/{info.reference_slug}.md":
            note = f"a report comparing main with runtime v1 (branch {info.reference_branch}), two sizes"
        if note:
            click.echo(f"  {name:<40} {note}")
    click.echo(f"  {'branch ' + info.fix_branch:<40} unboxes the sum: the fix {info.fixed_slug} names")
    click.echo(f"  {'branch ' + info.reference_branch:<40} runtime v1, the older implementation (hardware %)")
    click.echo(f"  {'branch ' + PARITY_BRANCH:<40} changes one GPU twin only: `perfbot parity` flags it")
    repo = shlex.quote(str(path))
    steps = ((f"perfbot verify {info.fixed_slug} --repo {repo}", "its fix branch against main: fixed"),
             (f"perfbot verify {info.fixed_slug} --repo {repo} --head main", "main alone: the claim holds, reproduced"),
             (f"perfbot verify {info.open_slug} --repo {repo}", "no fix yet: main alone, reproduced"),
             (f"perfbot verify {info.merged_slug} --repo {repo}", "its fix in main against its parent: fixed"),
             (f"perfbot verify {info.reference_slug} --repo {repo}", "main against runtime v1: slower than runtime@v1"),
             (f"perfbot serve --repo {repo}", "records and local issues for these reports"))
    width = max(len(command) for command, _ in steps)
    click.echo("\nnext:")
    for command, comment in steps:
        click.echo(f"  {command:<{width}}  # {comment}")
    if shutil.which("gcc") is None:
        click.echo("note: verification builds C with gcc, which is not on PATH; install it first", err=True)


def _runtime(path: Path) -> None:
    from bot.demo.runtime import OLD_TAG, create_runtime

    create_runtime(path)
    click.echo(f"created the runtime `tally` in {path}: src/tally.c, its build line in README.md, a report in "
               f"devs/issues/, and tag {OLD_TAG} (a tally without --jobs); no .perfbot.toml yet")
    click.echo(f"next: cd {shlex.quote(str(path))} && perfbot init   (docs/adopt.md walks through the rest)")
