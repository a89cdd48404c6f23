"""`perfbot verify`: measure a report's claim (or its fix, base against head) at a commit on a bench runner and
answer in the words of core/verify/verdict_words.py: reproduced, fixed, slower than REF ... or inconclusive."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from bot.adapters.git import GitError, GitRepository
from bot.adapters.runners import SshOptions, make_runner
from bot.adapters.store.bench.bench_store import save_run
from bot.cli.common import db_option, open_database, reports_errors, settings_for
from bot.core.tracker.refnames import branch_name_problem
from bot.core.verify import noise
from bot.core.verify import verdict_words as words
from bot.core.verify.run_parts import RunOptions
from bot.core.verify.vocabulary import Purpose
from bot.errors import TransientError, UserError
from bot.services.bench.bench_flow import BenchFlow, record_result
from bot.services.bench.bench_inputs import bench_config, read_record, refuse_without_knob, source_of
from bot.services.bench.fix_flow import NOT_A_FIX, fix_refs
from bot.services.bench.verify import verify

# 0: what was asked holds (fixed; the claim reproduced), 1: it does not, or the run could not say, 3: inconclusive
# (or implausible: a speedup past the ideal).
EXIT = {words.FIXED: 0, words.REPRODUCED: 0, words.SLOWER: 0, words.INCONCLUSIVE: 3, words.IMPLAUSIBLE: 3}


def _choose_refs(repo: GitRepository, record, base: str | None, head: str | None) -> tuple[str | None, str, bool]:
    """(base, head, the fix is in main). Without --head, the report's own fix: a branch or commit not merged yet
    against the default branch, one already in main against its parent (its own gain); else HEAD alone."""
    if head is not None:
        resolved = repo.resolve(head)
        return (repo.resolve(base) if base else None), resolved, repo.is_ancestor(resolved,
                                                                               repo.resolve(repo.default_ref()))
    fix = record.fix or ""
    if fix.lower() not in ("", *NOT_A_FIX) and not branch_name_problem(fix):
        try:
            return fix_refs(repo, fix, base)
        except GitError:
            pass  # the fix is not in this clone: measure the default branch alone
    return (repo.resolve(base) if base else None), repo.resolve(repo.default_ref()), False


@click.command("verify")
@click.argument("slug")
@click.option("--repo", "repo_path", default=".", show_default=True, type=click.Path(file_okay=False))
@click.option("--base", default=None, help="The commit before the fix (default: the default branch).")
@click.option("--head", default=None, help="The commit to judge (default: the report's own fix branch).")
@click.option("--runner", "runner_name", default=None,
              help="A runner named in the instance file, instance/perfbot.toml (default: by backend).")
@click.option("--no-sandbox", is_flag=True, help="Run the report's code uncontained on this machine: yours to say as "
              "its operator (a repository's .perfbot.toml never can).")
@click.option("--ref", default=None, help="Where the report and .perfbot.toml are read (default: the default branch);"
              " never the commits measured.")
@click.option("--config", "config_file", default=None, type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="Try this file instead of the committed .perfbot.toml (its [build] script from the working tree).")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@db_option
@reports_errors
def verify_command(slug, repo_path, base, head, runner_name, ref, config_file, no_sandbox, fmt, db_url) -> None:
    """Exit 0 fixed or reproduced, 1 not (or output mismatch, or error), 3 inconclusive, 2 usage."""
    settings = settings_for(None)
    operator = settings.operator.without_sandbox() if no_sandbox else settings.operator
    repo = GitRepository(repo_path)
    try:
        source = source_of(repo, ref, config_file)
        config = bench_config(repo, source, operator)
        record = read_record(repo, slug, source.sha, reading=config.reading,
                             where=f"{source.ref} ({source.sha[:12]}) of {repo.path}")
        refuse_without_knob(repo, source, config, record)  # before any build: a sweep that varies nothing
        base_sha, head_sha, in_main = _choose_refs(repo, record, base, head)
        in_base = base_sha is not None and repo.is_ancestor(head_sha, base_sha)
        full_name = repo.full_name
        # The service's choice of runner, word for word: by name, else by the report's backend.
        runner_conf = BenchFlow.runner_conf(config, record, runner_name)
    finally:
        repo.close()
    click.echo(f"configuration: {source.describe()}", err=True)  # a person trying --config sees which one ran
    cache = settings.instance_dir / "bench" / runner_conf.name
    runner = make_runner(runner_conf, repo.path, cache, config, SshOptions.from_settings(settings),
                         private=settings.private_folders(),
                         secrets=settings.secret_values())
    bars = {}

    def progress(side: str, taken: int, most: int) -> None:
        if side not in bars:
            bars[side] = click.progressbar(length=most, label=f"{slug} {side}", file=sys.stderr)
            bars[side].__enter__()
        bars[side].update(1)

    try:
        outcome = verify(record, config, runner, head_sha, base_sha, progress)
    finally:
        for bar in bars.values():
            bar.__exit__(None, None, None)
    if in_base and base_sha is not None:
        outcome.mark_in_base(base_sha)
    if outcome.noisy is not None:  # the service measures its runs again by itself; a command cannot
        outcome.message += f"; {noise.ONCE_TEXT}"
    purpose = Purpose.FIX if base_sha else Purpose.REPRODUCE
    stored = outcome.stored()
    told = words.of_result(purpose, outcome.verdict, stored)
    with open_database(db_url) as db:
        # A fix in main: the record then says "fixed in main since ..."
        run_id = save_run(db, full_name, slug, base_sha, head_sha, stored, host=runner.host, purpose=purpose,
                          options=RunOptions(in_main=True) if in_main and base_sha is not None else None)
        record_result(db, full_name, slug, purpose, run_id, outcome.verdict, True)  # as a service run does
    issue = _update_issue(repo_path, db_url, full_name, slug)
    if fmt != "json":
        click.echo(issue, err=True)
    if told is None:  # a finished run always has a verdict; say so rather than fail on it
        raise click.ClickException(f"bench run {run_id} ended without a verdict: {outcome.message}")
    if fmt == "json":
        click.echo(json.dumps({"slug": slug, "run": run_id, "plan": {"base": base_sha, "head": head_sha,
                                                                     "runner": runner.name,
                                                      "config": source.describe(),
                                                      "threshold": config.verify.seq_threshold,
                                                      "min_samples": config.verify.min_samples,
                                                      "max_samples": config.verify.max_samples}, **stored.as_dict(),
                                "verdict": told.key, "verdict_text": told.said, "issue": issue}, indent=2))
    else:
        for side in outcome.sides:
            if side.interval:
                said = words.of_side(purpose, side.label, side.decision, side.against, side.factor)
                click.echo(side.summary(words.text(said, side.decision)))
        click.echo(f"{told.text}: {outcome.message} (bench run {run_id})")
    raise SystemExit(EXIT.get(told.key, 1))


def _update_issue(repo_path: str, db_url: str | None, full_name: str, slug: str) -> str:
    """The record's issue says what this run found, as after a run the service made: its body and labels are
    mirrored again from the record's standing. Without a tracker to write to (no GitHub App, no local mode), the
    answer says why."""
    from bot.app.runtime import Runtime

    settings = settings_for(db_url)
    if settings.local_mode:
        settings = settings.__class__.from_env(database_url=db_url, local_repo=Path(repo_path).resolve())
    try:
        runtime = Runtime(settings)
    except (UserError, TransientError, ValueError) as exc:
        return f"the issue of {slug} is not updated: {exc}"
    try:
        summary = runtime.services.reports.mirror(full_name, None, {slug})
    except (UserError, TransientError) as exc:
        return f"the issue of {slug} is not updated: {exc}"
    finally:
        runtime.db.dispose()
    said = ", ".join(f"{what} {n}" for what, n in sorted(summary.counts.items()))
    return f"the issue of {slug} is in step with what was measured ({said or 'nothing to write'})"
