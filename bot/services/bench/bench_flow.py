"""Bench runs as queued work: request one, run it on a bench runner with its comment and commit status kept
current, then store the verdict on the record (a fix's verdict, or whether a new claim reproduces).

A run is a row first (`queued`) and a delivery `perfbot.verify` second, so a crash between the two leaves a
visible queued run rather than lost work, and a redelivered job finds its run done and does nothing.
"""
from __future__ import annotations

import dataclasses
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime

from bot.adapters.git import GitRepository
from bot.adapters.store.bench import bench_store
from bot.adapters.store.engine import Database
from bot.adapters.store.mirror_queries import issue_numbers
from bot.adapters.store.queue import LeaseLost
from bot.adapters.templates import render
from bot.core.config import PerfbotFile
from bot.core.config.instance import DEFAULT_OPERATOR, OperatorConfig
from bot.core.reports.records import PerfIssue
from bot.core.tracker.issue_view import comment_marker
from bot.core.tracker.untrusted import fenced
from bot.core.verify import bench_view, noise, scaling_view
from bot.core.verify import verdict_words as words
from bot.core.verify.bench_run import BenchRun
from bot.core.verify.claim_size import number
from bot.core.verify.run_parts import RunProgress, RunResult
from bot.core.verify.units import result_unit
from bot.core.verify.vocabulary import Purpose, Test
from bot.errors import NotConfigured, NotFound, TransientError, UserError
from bot.services.answers import Answers
from bot.services.bench.actions_flow import ActionsFlow
from bot.services.bench.bench_inputs import FIX, GUARD, REPRODUCE, for_run
from bot.services.bench.gpu_sweep import is_gpu_report
from bot.services.bench.verify import Outcome, verify

log = logging.getLogger("perfbot.bench")
COMMENT_EVERY_SECONDS = 10.0  # a live comment, not a flood of edits: GitHub paces writes


@dataclass(frozen=True)
class RunTarget:
    """Where a run's results are shown: a PR (comment + status on its head) or the record's issue."""

    number: int | None
    on_pull: bool


def status_context(slug: str, purpose: str = FIX) -> str:
    return f"perfbot/verify {slug}" if purpose == FIX else f"perfbot/reproduce {slug}"


NOISY_WAIT = 600  # seconds before a run measured on a busy host is measured again (its verdict is up meanwhile)


class Cancelled(Exception):
    """Someone asked to stop this run (`/perf cancel`); raised between two samples."""


class BenchFlow:
    def __init__(self, db: Database, make_runner: Callable, *, comment_every: float = COMMENT_EVERY_SECONDS,
                 operator: OperatorConfig = DEFAULT_OPERATOR) -> None:
        self.db = db
        self.operator = operator  # the instance file's runners, sandbox and ceilings
        self.make_runner = make_runner  # (runner conf, repo path, PerfbotFile) -> Runner
        self.comment_every = comment_every
        self.answers = Answers(db)  # the command answers that asked for a run follow it
        self.actions = ActionsFlow(self)

    def run(self, run_id: int, repo: GitRepository, tracker,
            keep_alive: Callable[[float], object]) -> BenchRun | None:
        run = bench_store.get_run(self.db, run_id)
        # A run with a re-measure due keeps its first (noisy) verdict shown while it is measured again.
        again = run is not None and run.done and run.remeasure_due
        if run is None or (run.done and not again):
            return run  # redelivered after it finished: nothing to do twice
        target = self.target_of(run)
        try:
            config, record = for_run(repo, run, self.operator)
            conf = self.runner_conf(config, record, run.runner_asked)
            if conf.kind == "actions":  # measured by a dispatched workflow; its end arrives later
                return self.actions.dispatch(run, repo, tracker, target, config, record, conf)
            runner = self.make_runner(conf, repo.path, config)
        except UserError as exc:
            return self.finish(run, Test.ERROR, str(exc), RunResult(), tracker, target, config=None, record=None)
        # The worker's heartbeat keeps the lease however long the run; keep_alive raises LeaseLost once another
        # worker took the delivery over, so this one stops between two samples.
        keep_alive(0)
        # The worker's lease fences every write of the run: once another worker took the delivery over (this one
        # stalled past its lease), this one's progress and verdict are refused (LeaseLost) rather than mixed in.
        fence = getattr(keep_alive, "fence", None)
        if not again:
            bench_store.start_run(self.db, run_id, runner.name, runner.host, fence)
            run = bench_store.stored_run(self.db, run_id)
            self.show(run, tracker, target, config, record)
        last_shown = [time.monotonic()]
        shown = run

        def observe(sides) -> None:
            nonlocal shown
            keep_alive(0)
            if bench_store.cancel_requested(self.db, run_id):
                raise Cancelled()
            if again:
                return  # the first verdict stays up until the re-measure replaces it
            live = [s for s in sides if s.c]
            progress = RunProgress(live[-1].label, len(live[-1].c), config.verify.max_samples)
            partial = RunResult(tuple(s.stored() for s in live))  # the numbers so far, shown while they come in
            bench_store.save_progress(self.db, run_id, progress, partial, fence)
            shown = dataclasses.replace(shown, progress=progress, result=partial)
            if time.monotonic() - last_shown[0] >= self.comment_every:
                last_shown[0] = time.monotonic()
                self.show(shown, tracker, target, config, record)

        try:
            outcome = verify(record, config, runner, run.head, run.base if run.purpose == FIX else None,
                             observe=observe)
        except Cancelled:
            return self.finish(run, Test.CANCELLED, "cancelled on request while measuring", RunResult(), tracker,
                               target, config, record, fence=fence)
        except (TransientError, LeaseLost):
            raise  # the host is unreachable, or another worker runs it now: the run stays where it was
        except UserError as exc:
            return self.finish(run, Test.ERROR, str(exc), RunResult(), tracker, target, config, record, fence=fence)
        except Exception:
            # A bug, not the report's fault: the run must not stay "running" for ever; the worker logs it.
            self.finish(run, Test.ERROR, "internal error while measuring; the maintainers have the log", RunResult(),
                         tracker, target, config, record, fence=fence)
            raise
        if run.compares_base and run.base and repo.is_ancestor(run.head, run.base):
            outcome.mark_in_base(run.base)
        tries = run.noisy_tries
        if outcome.noisy is not None and tries < config.verify.noisy_retries:
            # Contention, not the code, may have made these numbers: the verdict is posted now, marked noisy,
            # and measured again once the host may have calmed; that measurement replaces it.
            due = noise.next_try(datetime.now(UTC), NOISY_WAIT)
            bench_store.set_options(self.db, run_id, noisy_tries=tries + 1, remeasure_at=due)
            waiting = noise.waiting_text(due)
            outcome.message += f"; {waiting} ({words.REPLACES_TEXT})"
            self.finish(run, Test(outcome.verdict), outcome.message, outcome.stored(), tracker, target, config,
                        record, outcome, remeasure_due=True, fence=fence)
            raise TransientError(f"bench run {run_id}: {outcome.noisy}; verdict posted, {waiting} "
                                 f"({tries + 1} of {config.verify.noisy_retries})", retry_after=NOISY_WAIT)
        if outcome.noisy is not None and tries:
            outcome.message += f" (busy in all {tries + 1} measurements)"
        return self.finish(run, Test(outcome.verdict), outcome.message, outcome.stored(), tracker, target, config,
                           record, outcome, fence=fence)

    @staticmethod
    def runner_conf(config: PerfbotFile, record: PerfIssue, name: str | None = None):
        """The runner a report is measured on: the one named, else the first whose labels hold its backend (the
        CLI's `perfbot verify` asks here too)."""
        if name is not None:
            conf = next((r for r in config.operator.runners if r.name == name), None)
            if conf is None:
                raise NotFound(f"no runner named {name} in the instance's configuration",
                               f"runners: {', '.join(r.name for r in config.operator.runners)}", name=name)
            return conf
        conf = config.runner_for(record.backend or "c")
        if conf is None:
            raise NotConfigured(f"no runner for backend {record.backend or 'c'}: the operator's instance file has no "
                                f"[[runners]] entry whose labels include \"{record.backend or 'c'}\"",
                                key="[[runners]]", owner="operator")
        return conf

    # The public surface ActionsFlow shares: where a run is shown, how it is shown, and how it ends.

    def target_of(self, run: BenchRun) -> RunTarget:
        """A PR run shows on its PR; any other on its record's issue."""
        if run.pr:
            return RunTarget(run.pr, True)
        return RunTarget(issue_numbers(self.db, run.repo).get(run.slug), False)

    def finish(self, run: BenchRun, verdict: Test, message: str, result: RunResult, tracker, target: RunTarget,
               config: PerfbotFile | None, record: PerfIssue | None, outcome: Outcome | None = None,
               remeasure_due: bool = False, fence=None) -> BenchRun:
        """Store the verdict, leave it on the record, show it; the run as stored now."""
        bench_store.finish_run(self.db, run.id, verdict, message, result, fence)
        if not remeasure_due and run.remeasure_due:
            bench_store.set_options(self.db, run.id, remeasure_at=None)  # this verdict replaced the noisy one
        record_result(self.db, run.repo, run.slug, run.purpose, run.id, verdict, outcome is not None)
        done = bench_store.stored_run(self.db, run.id)
        self.show(done, tracker, target, config, record)
        log.info("bench run %s of %s: %s", run.id, run.slug, message)
        return done

    def show(self, run: BenchRun, tracker, target: RunTarget, config: PerfbotFile | None,
             record: PerfIssue | None) -> None:
        """The run's comment and status, written again as it progresses; a tracker outage never stops a run."""
        try:
            if target.number is not None and _worth_a_comment(run):
                marker = comment_marker(MARKERS[run.purpose], run.slug)
                tracker.upsert_comment(target.number, marker, comment_body(marker, run, config, record), None)
            if target.on_pull:
                tracker.set_status(run.head, status_context(run.slug, run.purpose),
                                   bench_view.status_state(run),
                                   bench_view.status_description(run))
        except TransientError as exc:
            log.warning("bench run %s: could not update its comment or status: %s", run.id, exc)
        self.answers.run_changed(run, tracker)  # every change a run shows reaches the answer lines that asked


MARKERS = {FIX: "bench", REPRODUCE: "reproduce", GUARD: "guard"}


def _worth_a_comment(run: BenchRun) -> bool:
    """A guard that holds (or cannot tell yet) writes nothing on its closed issue: it runs after every push."""
    if run.purpose != GUARD:
        return True
    return run.done and guard_news(run) is not None


def guard_news(run: BenchRun) -> str | None:
    """What a finished guard run tells people: the claim is back, or the guard can no longer measure it."""
    found = reproduction(run.verdict, run.measured)
    return found if found in ("reproduced", "mismatch", "error") else None


def record_result(db: Database, full_name: str, slug: str, purpose: Purpose, run_id: int, verdict: str,
                  measured: bool) -> None:
    """What a finished run leaves on its record, whoever ran it (this flow, or `perfbot verify`): a fix's verdict,
    or whether the claim holds. A stopped run says nothing; a guard's result is the guard flow's to act on."""
    if verdict == "cancelled" or purpose == GUARD:
        return
    if purpose == FIX:
        bench_store.set_record_result(db, full_name, slug, verdict=verdict, verdict_run_id=run_id)
    else:
        bench_store.set_record_result(db, full_name, slug, reproduced=reproduction(verdict, measured))


def reproduction(verdict: str | None, measured: bool) -> str:
    """A claim measured on the default branch: a 'pass' there means the gap the report claims is not there."""
    if verdict == "mismatch":
        return "mismatch"  # the program and its "1-to-1" translation do not compute the same thing
    if not measured or verdict == "error":
        return "error"
    said = {"pass": "not reproduced", "fail": "reproduced", words.IMPLAUSIBLE: words.IMPLAUSIBLE}
    return said.get(verdict or "", "inconclusive")


def comment_body(marker: str, run: BenchRun, config: PerfbotFile | None, record: PerfIssue | None) -> str:
    result = run.result
    threads = record.threads if record else None
    told = words.of_run(run)
    if told is None:
        headline, icon = "running", "⏳"
    elif run.purpose == GUARD:
        guard_words = {words.NOT_REPRODUCED: "guard held", words.WITHIN: "guard held",
                       words.REPRODUCED: "guard failed: the fixed claim reproduces again (regressed)",
                       words.SLOWER: "guard failed: the fixed claim reproduces again (regressed)"}
        headline, icon = guard_words.get(told.key, f"guard could not measure ({told.text})"), told.icon
    elif run.purpose == REPRODUCE:
        headline, icon = f"claim {told.said}", told.icon
    else:
        headline, icon = told.said, told.icon
    held = "fixed" if run.purpose == FIX else "not reproduced"  # what the interval test passing means
    if config is None or record is None:
        criterion = "no plan could be made"
    elif is_gpu_report(record, config) and record.mode == "auto":
        criterion = (f"{held} when the automatic mode is within {config.gpu.auto_tolerance:.0%} of the faster forced "
                     "mode (CPU or GPU)")
    elif is_gpu_report(record, config):
        against = "the best CPU thread count" if config.gpu.against_best_cpu else "one CPU thread"
        criterion = f"{held} when the GPU is at least {config.gpu.min_speedup:g}x as fast as {against}"
    elif record.track == "par":
        criterion = (f"{held} at a speedup of at least {(record.threads or 1) * config.verify.par_efficiency:g}x on "
                     f"{record.threads} threads")
    elif record.reference:
        factor = next((side.factor for side in result.sides if side.factor), config.verify.reference_factor)
        criterion = f"{held} when the whole interval is within {factor:g}x of the reference"
    else:
        criterion = f"{held} when the whole interval is at or under {config.verify.seq_threshold:g}x"
    return render("bench_comment.md.j2", marker=marker, run=run, slug=run.slug, icon=icon, headline=headline,
                  progress=bench_view.progress_line(run.slug, run.progress, run.host),
                  rows=bench_view.side_rows(result, run.purpose), columns=bench_view.column_names(result, threads),
                  unit=result_unit(result),
                  chart=scaling_view.mermaid_curve(run.slug, result)
                  or bench_view.mermaid_chart(run.slug, result, threads),
                  scaling=scaling_view.scaling_tables(result), result=result,
                  fenced_message=fenced(run.message), suite=result.suite, criterion=criterion,
                  suite_said=words.text(words.of_suite(result.suite_verdict)),
                  waiting=run.waiting, replaces=words.REPLACES_TEXT,
                  gain=bench_view.gain_line(result), figure=number)
