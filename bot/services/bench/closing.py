"""Closing a record: only when its fix merged with a passing verdict on that very head.

The record becomes `fixed` (its issue closes as completed, with the verdict), and a bot branch moves the
report from `devs/issues/` to `devs/fixed/` with the verdict appended, proposed as a PR, so the files stay
the truth. A merge without such a verdict closes nothing: the issue says so, and only a person's logged
override can close it.
"""
from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass

from bot.adapters.git import GitRepository
from bot.adapters.store.bench import bench_store, fix_store
from bot.adapters.store.engine import Database
from bot.adapters.store.mirror_queries import issue_numbers
from bot.adapters.templates import render
from bot.core.reports.records import FIXED_DIR, REPORT_DIR
from bot.core.tracker.issue_view import comment_marker
from bot.core.verify import bench_view
from bot.core.verify.bench_run import BenchRun
from bot.core.verify.bench_view import code_span
from bot.services.dedup.dedup_flow import BOT_AUTHOR

log = logging.getLogger("perfbot.closing")


@dataclass(frozen=True)
class Closed:
    slug: str
    outcome: str  # fixed | kept open
    pull: int | None = None


def close_if_verified(db: Database, repo: GitRepository, tracker, publish: Callable[[str], None], full_name: str,
                      fix: fix_store.FixRow, merged_head: str, *, pr_number: int | None = None,
                      delivery_id: str | None = None) -> Closed:
    run = bench_store.passing_run(db, full_name, fix.slug, merged_head)
    number = issue_numbers(db, full_name).get(fix.slug)
    where = f"#{pr_number}" if pr_number else f"branch {code_span(fix.branch)}"  # git allows backticks in names
    if run is None:
        if number is not None:
            marker = comment_marker("unverified-merge", fix.slug)
            tracker.upsert_comment(number, marker, render(
                "unverified_merge_comment.md.j2", marker=marker, slug=fix.slug, where=where, head=merged_head), None)
        log.info("%s: %s merged without a passing verdict on %s; %s stays open", full_name, where,
                 merged_head[:12], fix.slug)
        return Closed(fix.slug, "kept open")
    detail = f"fix {where} merged at {merged_head[:12]}; bench run {run.id} found it fixed: {run.message}"
    if not fix_store.mark_fixed(db, full_name, fix.slug, detail, "perfbot", delivery_id):
        return Closed(fix.slug, "kept open")  # merged or deleted meanwhile: nothing of ours to close
    pull = _propose_move(repo, tracker, publish, fix.slug, run, where)
    if number is not None:
        marker = comment_marker("fixed", fix.slug)
        tracker.upsert_comment(number, marker, render(
            "fixed_comment.md.j2", marker=marker, slug=fix.slug, where=where, run=run, pull=pull,
            summary=bench_view.status_description(run)), None)
    return Closed(fix.slug, "fixed", pull)


def _propose_move(repo: GitRepository, tracker, publish: Callable[[str], None], slug: str, run: BenchRun,
                  where: str) -> int | None:
    ref = repo.default_ref()
    base = repo.resolve(ref)
    data = repo.read_file(base, f"{REPORT_DIR}/{slug}.md")
    if data is None:
        return None  # the report already left devs/issues
    text = data.decode("utf-8", "replace").rstrip("\n")
    text += "\n\n" + render("verification_section.md.j2", run=run, where=where,
                            summary=bench_view.status_description(run)).strip("\n") + "\n"
    branch = f"perfbot/fixed-{slug}"
    repo.commit_files(base, branch, {f"{REPORT_DIR}/{slug}.md": None, f"{FIXED_DIR}/{slug}.md": text.encode("utf-8")},
                      f"Move {slug} to {FIXED_DIR}: verified fixed by {where}", BOT_AUTHOR)
    publish(branch)
    body = render("fixed_pull.md.j2", marker=comment_marker("fixed-pull", slug), slug=slug, where=where, run=run)
    return tracker.open_pull(branch, ref.removeprefix("refs/heads/"), f"Move {slug} to {FIXED_DIR}: fixed by {where}",
                             body)
