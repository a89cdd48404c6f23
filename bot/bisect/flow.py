"""Bisection: the first commit along the default branch's first-parent line that brought a fixed claim back.

Each step measures the report's reproduction at one commit with the same sequential intervals as every
verification (`services/bench/verify.py`), under the default branch's configuration and runner. An undecided step
is measured once more with twice the samples and time, then skipped, never guessed; a commit that does not
build or run is skipped. Every decided step is saved before the next starts, so a bisection a crash or a
host outage interrupted goes on where it stopped. The culprit (or the range that holds it, when skipped
commits sit next to it) is named with every measurement in one marked comment on the record's issue.
"""
from __future__ import annotations

import json
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bot.adapters.git import GitError, GitRepository
from bot.adapters.store.bench import guard_store
from bot.adapters.store.engine import Database
from bot.adapters.store.mirror_queries import issue_numbers
from bot.adapters.store.queue import NewDelivery
from bot.adapters.templates import render
from bot.bisect import search
from bot.bisect import store as bisect_store
from bot.core.tracker.issue_view import comment_marker
from bot.core.tracker.untrusted import cell
from bot.errors import Busy, Invalid, TransientError, UserError
from bot.services.bench.bench_flow import BenchFlow, reproduction
from bot.services.bench.bench_inputs import bench_config, read_record, source_of
from bot.services.bench.verify import verify

log = logging.getLogger("perfbot.bisect")
EVENT = "perfbot.bisect"
MARK_ICONS = {search.GOOD: "✅ good", search.BAD: "❌ bad", search.SKIP: "⏭️ skipped", search.RESAMPLE: "❔ again"}


class BisectFlow:
    def __init__(self, db: Database, bench: BenchFlow, enqueue: Callable[[NewDelivery], bool]) -> None:
        self.db = db
        self.bench = bench
        self.enqueue = enqueue

    def start(self, repo: GitRepository, full_name: str, slug: str, good: str, bad: str, *, requested_by: str,
              installation_id: int | None, options: dict | None = None, config_file: Path | None = None) -> int:
        """Check the range and queue the bisection; a user error says what is wrong with it."""
        running = bisect_store.unfinished(self.db, full_name, slug)
        if running is not None:
            raise Busy(f"bisection {running['id']} of `{slug}` is still going", waiting_for="its comment")
        try:
            good_sha, bad_sha = repo.resolve(good), repo.resolve(bad)
            line = repo.bisect_range(good_sha, bad_sha)
        except GitError as exc:
            raise Invalid(f"cannot bisect {slug}: {exc}", "name a good..bad range of the default branch") from None
        limit = bench_config(repo, source_of(repo, None, config_file), self.bench.operator).guards.max_bisect_commits
        if len(line) - 1 > limit:
            raise Invalid(f"cannot bisect {slug}: {len(line) - 1} first-parent commits lie between "
                          f"{good_sha[:12]} and {bad_sha[:12]}, more than [guards] max_bisect_commits = {limit}",
                          "name a narrower good..bad")
        if len(line) < 2:
            raise Invalid(f"cannot bisect {slug}: {good_sha[:12]} and {bad_sha[:12]} are the same commit",
                          "name a passing commit older than the failing one")
        bisect_id = bisect_store.create(self.db, full_name, slug, line[0].sha, bad_sha, requested_by=requested_by,
                                        options=options)
        self.enqueue(NewDelivery(f"bisect-{bisect_id}", EVENT, None, full_name, installation_id,
                                 json.dumps({"bisection": bisect_id})))
        return bisect_id

    def run(self, bisect_id: int, repo: GitRepository, tracker, keep_alive: Callable[[float], object],
            on_step: Callable[[dict], None] | None = None, config_file: Path | None = None) -> dict | None:
        """`config_file`: `perfbot bisect --config`, a .perfbot.toml not committed yet (the service never has one)."""
        row = bisect_store.get(self.db, bisect_id)
        if row is None or row["status"] == bisect_store.DONE:
            return row  # redelivered after it finished
        line = repo.bisect_range(row["good"], row["bad"])
        commits = tuple(c.sha for c in line)
        summaries = {c.sha: c.summary for c in line}
        try:
            source = source_of(repo, None, config_file)
            config = bench_config(repo, source, self.bench.operator)
            record = read_record(repo, row["slug"], source.sha, row["bad"], reading=config.reading)
            runner = self.bench.make_runner(self.bench.runner_conf(config, record, config.guards.runner),
                                            repo.path, config)
        except UserError as exc:
            return self._finish(row, "error", str(exc), None, summaries, tracker)
        quiet = runner.build_timeout + 5 * config.verify.timeout_seconds + 60
        marks = self._known_marks(row, commits)
        while True:
            step = search.next_step(commits, marks)
            if not isinstance(step, search.Probe):
                return self._conclude(row, step, summaries, tracker)
            attempt = 1 + sum(1 for s in row["steps"] if s["sha"] == step.sha and s["mark"] == search.RESAMPLE)
            planned = config if attempt == 1 else config.with_verify(
                max_samples=config.verify.max_samples * 2, budget_seconds=config.verify.budget_seconds * 2)
            keep_alive(quiet)
            try:
                outcome = verify(record, planned, runner, step.sha, observe=lambda sides: keep_alive(quiet))
            except TransientError:
                raise  # the host is away: the delivery is retried and the steps so far are kept
            except UserError as exc:
                return self._finish(row, "error", str(exc), None, summaries, tracker)
            found = reproduction(outcome.verdict, True)
            side = outcome.sides[-1] if outcome.sides else None
            saved: dict[str, Any] = {"sha": step.sha, "mark": search.mark_of(found, attempt), "attempt": attempt,
                                     "found": found,
                     "interval": side.interval.as_dict() if side and side.interval else None,
                     "pairs": len(side.c) if side else 0, "message": outcome.message[:500]}
            bisect_store.add_step(self.db, bisect_id, saved)
            row["steps"].append(saved)
            if saved["mark"] != search.RESAMPLE:
                marks[step.sha] = saved["mark"]
            log.info("bisection %s of %s: %s at %s (%s left)", bisect_id, row["slug"], saved["mark"], step.sha[:12],
                     step.left)
            self._show(row, summaries, tracker, running=True)
            if on_step is not None:
                on_step(saved)

    def _known_marks(self, row: dict, commits: tuple[str, ...]) -> dict[str, str]:
        """Guard runs already measured some of these commits (the failing end at least); saved steps come next."""
        marks = {sha: search.GOOD if verdict == "pass" else search.BAD
                 for sha, verdict in guard_store.guard_results(self.db, row["repo"], row["slug"]).items()
                 if sha in commits and verdict in ("pass", "fail")}
        for step in row["steps"]:
            if step["mark"] != search.RESAMPLE:
                marks[step["sha"]] = step["mark"]
        return marks

    def _conclude(self, row: dict, step, summaries: dict[str, str], tracker) -> dict:
        if isinstance(step, search.Found):
            message = (f"introduced by {step.sha[:12]} ({summaries.get(step.sha, '')}); "
                       f"last good {step.last_good[:12]}")
            return self._finish(row, "found", message, step.sha, summaries, tracker)
        if isinstance(step, search.Unresolved):
            names = ", ".join(sha[:12] for sha in step.suspects)
            message = (f"introduced by one of {names}: all but the last could not be decided "
                       f"(last good {step.last_good[:12]})")
            return self._finish(row, "unresolved", message, None, summaries, tracker)
        return self._finish(row, "unresolved", f"not bisectable: at {step.sha[:12]} {step.problem}", None,
                            summaries, tracker)

    def _finish(self, row: dict, outcome: str, message: str, culprit: str | None, summaries: dict[str, str],
                tracker) -> dict:
        bisect_store.finish(self.db, row["id"], outcome, message, culprit)
        done = bisect_store.stored(self.db, row["id"])
        log.info("bisection %s of %s: %s", row["id"], row["slug"], message)
        self._show(done, summaries, tracker, running=False)
        return done

    def _show(self, row: dict, summaries: dict[str, str], tracker, *, running: bool) -> None:
        number = issue_numbers(self.db, row["repo"]).get(row["slug"])
        if number is None:
            return
        marker = comment_marker("bisect", row["slug"])
        steps = [{**s, "summary": summaries.get(s["sha"], ""), "shown": MARK_ICONS.get(s["mark"], s["mark"])}
                 for s in row["steps"]]
        body = render("bisect_comment.md.j2", marker=marker, row=row, steps=steps, running=running,
                      culprit_summary=summaries.get(row.get("culprit") or "", ""), cell=cell)
        try:
            tracker.upsert_comment(number, marker, body, None)
        except TransientError as exc:
            log.warning("bisection %s: could not update its comment: %s", row["id"], exc)
