"""Bench runs on GitHub Actions: dispatch the bench workflow, then turn its samples artifact into a verdict.

A run dispatched here stays `running` without holding a worker: its end arrives as a `workflow_run` webhook
or is found by the polling job, and both land in `complete`, which decides with the same statistics as the
other runners and finishes through BenchFlow, so comment, status and verdict look the same.
"""
from __future__ import annotations

import logging
from datetime import UTC, datetime, timedelta

from bot.adapters.git import GitRepository
from bot.adapters.github.actions import actions_of
from bot.adapters.runners.actions import (
    MAX_ZIP_BYTES,
    ArtifactError,
    artifact_name,
    checked_sides,
    dispatch_inputs,
    read_samples,
    run_title,
)
from bot.adapters.store.bench import bench_store
from bot.core.events import WorkflowRun
from bot.core.verify.bench_run import ActionsDispatch, BenchRun
from bot.core.verify.claim_size import number
from bot.core.verify.run_parts import RunProgress, RunResult
from bot.core.verify.stats import SamplingPlan, decide_at_least
from bot.core.verify.vocabulary import Test
from bot.errors import UserError
from bot.services.bench.bench_inputs import for_run
from bot.services.bench.verify import ERROR, MISMATCH, Outcome, Side

log = logging.getLogger("perfbot.actions")
HOST = "GitHub Actions"
POLL_AFTER = timedelta(minutes=1)  # a webhook usually comes first; polling is for the ones that never do
NEVER_STARTED = timedelta(minutes=15)


class ActionsFlow:
    def __init__(self, bench) -> None:
        self.bench = bench  # the BenchFlow whose runs these are: its store, and its public show, finish, target_of

    def dispatch(self, run: BenchRun, repo: GitRepository, tracker, target, config, record, conf) -> BenchRun:
        """Ask GitHub to run the plan on `conf`'s self-hosted runners; returns at once, the run `running`."""
        inputs = dispatch_inputs(run, record, config, conf)
        actions = actions_of(tracker)
        actions.dispatch(conf.workflow, actions.default_branch(), inputs)
        db = self.bench.db
        bench_store.start_run(db, run.id, conf.name, HOST)
        bench_store.set_options(db, run.id, actions=ActionsDispatch(conf.workflow, datetime.now(UTC)))
        bench_store.save_progress(db, run.id, RunProgress(note="dispatched to GitHub Actions"))
        run = bench_store.stored_run(db, run.id)
        self.bench.show(run, tracker, target, config, record)
        log.info("bench run %s of %s dispatched to %s (%s)", run.id, run.slug, conf.workflow, conf.name)
        return run

    def due(self, full_name: str, now: datetime) -> list[tuple[BenchRun, ActionsDispatch]]:
        """Runs dispatched over a minute ago and not finished: what polling asks GitHub about."""
        due = []
        for run_id in bench_store.unfinished_runs(self.bench.db, full_name):
            run = bench_store.stored_run(self.bench.db, run_id)
            sent = run.actions
            if sent is not None and now - sent.dispatched_at >= POLL_AFTER:
                due.append((run, sent))
        return due

    def poll(self, full_name: str, repo: GitRepository, tracker, now: datetime, is_bot) -> list[BenchRun]:
        """Dispatched runs whose workflow run finished without a webhook reaching perfbot, finished now."""
        finished = []
        for run, sent in self.due(full_name, now):
            dispatched = sent.dispatched_at
            if bench_store.cancel_requested(self.bench.db, run.id):
                finished.append(self._end(run, tracker, Test.CANCELLED, "cancelled on request; perfbot no longer "
                                                                        "waits for its workflow run"))
                continue
            found = actions_of(tracker).find_run(sent.workflow, run_title(run.id), dispatched)
            if found is not None and found.status == "completed" and is_bot(found.actor):
                done = self.complete(run.id, repo, tracker, found)
                if done is not None:
                    finished.append(done)
            elif found is None and now - dispatched >= NEVER_STARTED:
                # GitHub makes the run at once, queued or not: none at all means the workflow is not installed
                # as the template has it (its run-name is how perfbot finds it).
                finished.append(self._end(run, tracker, Test.ERROR,
                                          f"no workflow run titled '{run_title(run.id)}' appeared within "
                                          f"{NEVER_STARTED.seconds // 60} minutes of the dispatch of {sent.workflow}: "
                                          "is deploy/github/perfbot-bench.yml installed unchanged?"))
        return finished

    def _end(self, run: BenchRun, tracker, verdict: Test, message: str) -> BenchRun:
        return self.bench.finish(run, verdict, message, RunResult(), tracker, self.bench.target_of(run), None, None)

    def complete(self, run_id: int, repo: GitRepository, tracker, workflow_run: WorkflowRun) -> BenchRun | None:
        """The workflow run of bench run `run_id` completed: its samples decide, or its failure is the error."""
        run = bench_store.get_run(self.bench.db, run_id)
        sent = run.actions if run is not None else None
        if run is None or run.done or sent is None:
            return None  # not ours, or already finished: a second webhook or poll does nothing
        expected_path = f".github/workflows/{sent.workflow}"
        if workflow_run.path.split("@")[0] != expected_path or workflow_run.title != run_title(run_id) \
                or workflow_run.event != "workflow_dispatch":
            log.warning("bench run %s: workflow run %s is not its dispatch (%s, %s)", run_id, workflow_run.id,
                        workflow_run.path, workflow_run.event)
            return None
        target = self.bench.target_of(run)
        def finish(verdict: Test, message: str, result: RunResult | None = None, config=None, record=None,
                   outcome=None) -> BenchRun:
            return self.bench.finish(run, verdict, message, result or RunResult(), tracker, target, config, record,
                                     outcome)
        if bench_store.cancel_requested(self.bench.db, run_id):
            return finish(Test.CANCELLED, "cancelled on request while GitHub Actions measured")
        try:
            config, record = for_run(repo, run, self.bench.operator)
        except UserError as exc:
            return finish(Test.ERROR, str(exc))
        if workflow_run.conclusion != "success":
            ended = workflow_run.conclusion or "without a conclusion"
            return finish(Test.ERROR, f"the bench workflow run ended {ended}: {workflow_run.html_url}",
                          config=config, record=record)
        try:
            outcome = self._outcome(run, record, config, self._samples(tracker, workflow_run, run_id))
        except UserError as exc:
            return finish(Test.ERROR, f"{exc} ({workflow_run.html_url})", config=config, record=record)
        return finish(Test(outcome.verdict), outcome.message, outcome.stored(), config, record, outcome)

    @staticmethod
    def _samples(tracker, workflow_run: WorkflowRun, run_id: int) -> dict:
        actions = actions_of(tracker)
        name = artifact_name(run_id)
        artifact = next((a for a in actions.artifacts(workflow_run.id) if a.name == name), None)
        if artifact is None or artifact.expired:
            raise ArtifactError(f"the workflow run has no artifact {name}" + (" (expired)" if artifact else ""))
        return read_samples(actions.download(artifact, MAX_ZIP_BYTES))

    def _outcome(self, run: BenchRun, record, config, samples: dict) -> Outcome:
        """verify.py's verdict from the samples: the same interval and rule as a runner that hit its maximum."""
        par = record.track == "par"
        checked = checked_sides(samples, run, par)
        runner = run.runner
        sides = [Side(label, sha, first, second, par, output=output) for label, sha, first, second, output in checked]
        error, kind = samples.get("error"), samples.get("verdict")
        if error is not None:
            return Outcome(MISMATCH if kind == MISMATCH else ERROR, f"on {runner}: {str(error)[:600]}", sides, runner)
        if len(sides) != (2 if run.compares_base else 1):
            raise ArtifactError(f"the samples miss a side of bench run {run.id}")
        target = (record.threads or 1) * config.verify.par_efficiency if par else config.verify.seq_threshold
        for side in sides:
            taken = len(side.c)
            # A fixed number of pairs is one look, the sequential plan's last: the same interval and rule.
            plan = SamplingPlan(min(taken, config.verify.min_samples), taken)
            verdict, side.interval = plan.next_step(side.language, side.c, target,
                                                    decide_at_least) if par else plan.next_step(side.language, side.c,
                                                                                                target)
            side.decision = verdict if taken >= config.verify.min_samples else "inconclusive"
        head, ratio = sides[-1], sides[-1].interval
        point = f"{number(ratio.point)}x" if ratio else "not measured"
        at = (f"[{number(ratio.low)}, {number(ratio.high)}] " if ratio else "") + f"at {head.sha[:12]}"
        host = f" (host {str(samples.get('host'))[:60]})" if samples.get("host") else ""
        if par:
            message = (f"{record.slug} on {runner}{host}: speedup on {record.threads} threads {point} {at} "
                       f"against {target:g}x ({config.verify.par_efficiency:g} of ideal)")
        else:
            message = f"{record.slug} on {runner}{host}: language/C {point} {at} against the {target:g}x threshold"
        if config.suite is not None:
            message += "; the suite does not run on GitHub Actions runners"
        return Outcome(head.decision, message, sides, runner)
