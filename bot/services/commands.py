"""Comment commands: each command of a comment checked for permission, carried out, and answered on its own
line of perfbot's one answer comment (queued bench runs keep their line current until they finish).

A user error becomes the line's answer and says how to retry; an outage says to post the command again;
anything else is logged with the delivery id and shows only as an internal error.
"""
from __future__ import annotations

import logging
from datetime import UTC, datetime
from typing import TYPE_CHECKING, assert_never

from bot.adapters.store import answer_store
from bot.adapters.store.bench import bench_store, fix_store
from bot.adapters.store.locks import repo_lock
from bot.adapters.store.mirror_queries import record_by_issue
from bot.adapters.store.reviews.dedup_store import remember_not_duplicate
from bot.core import commands as grammar
from bot.core import refusals
from bot.core.commands.verbs import (
    Attach,
    Bisect,
    Cancel,
    Close,
    Command,
    Detach,
    Digest,
    Dup,
    Help,
    Merge,
    NotDup,
    Reopen,
    Status,
    Verify,
)
from bot.core.events import PullInfo, Where
from bot.core.tracker.fixes import slugs_fixed
from bot.core.verify.bench_view import code_span
from bot.core.verify.run_parts import RunOptions
from bot.errors import Invalid, NotAllowed, NotFound, TransientError, UserError
from bot.services.answers import Answers
from bot.services.bench.bench_inputs import FIX, REPRODUCE
from bot.services.bench.fix_flow import FixFlow
from bot.services.dedup.dedup_flow import propose_person_merge

if TYPE_CHECKING:
    from bot.services.usecases.context import Context
    from bot.services.usecases.guards import Guards
    from bot.services.usecases.lead import Lead
    from bot.services.usecases.reports import Reports

log = logging.getLogger("perfbot.commands")
WRITE_LEVELS = frozenset({"admin", "maintain", "write"})
COMMENT_LOCKS = 64





class CommandFlow:
    def __init__(self, ctx: Context, reports: Reports, guards: Guards, lead: Lead, bot_name: str = "perfbot") -> None:
        self.ctx = ctx  # the store, trackers, repositories, fixes and bench flows
        self.reports, self.guards, self.lead = reports, guards, lead  # the mirror, bisections, digest previews
        self.db = ctx.db
        self.bot_name = bot_name
        self.answers = Answers(ctx.db)

    @property
    def fixes(self) -> FixFlow:
        if self.ctx.fixes is None:  # only tests of other flows build services without one
            raise RuntimeError("this process attaches no fixes and runs no benchmarks")
        return self.ctx.fixes

    def run(self, where: Where, invocations: list[grammar.Invocation]) -> answer_store.AnswerRow | None:
        """Each command answered once: a command is its comment, line and text, so the same body delivered
        again (GitHub's redelivery, a replay under a new delivery id) finds its lines posted and does nothing.

        A line is done when the comment shows its answer, not when it is stored: a run cut short (a killed
        worker, a database restart) is run again by the delivery's retry, which carries out the lines it never
        answered, posts those it answered, and finds the one answer comment by its marker.
        """
        if not invocations:
            return None
        # One delivery at a time per comment, across workers and processes: a replay waits, then finds its lines.
        # Comments share COMMENT_LOCKS locks per repository: on SQLite each lock is a file that stays.
        with repo_lock(self.db, f"{where.full_name} commands {where.comment_id % COMMENT_LOCKS}"):
            answer = answer_store.open_answer(self.db, where.full_name, where.number, where.comment_id, where.author)
            stored = {(line.get("line"), line["command"]): index for index, line in enumerate(answer.lines)}
            unfinished = [(invocation, stored.get((invocation.line, invocation.text))) for invocation in invocations]
            unfinished = [(invocation, index) for invocation, index in unfinished
                          if index is None or answer_store.line_state(answer.lines[index]) != answer_store.POSTED]
            if not unfinished:
                return None
            tracker = self.ctx.trackers(where.full_name, where.installation_id)
            # GitHub keeps one reaction per person and content, so a run again adds no second 👀.
            tracker.react(where.number, where.comment_id, "eyes", review_comment=where.review_comment)
            level: list[str] = []  # asked once, and only when a command needs it
            for invocation, index in unfinished:
                if index is None:
                    index = answer_store.add_line(self.db, answer.id, invocation.text, line=invocation.line)
                elif answer_store.line_state(answer.lines[index]) == answer_store.ANSWERED:
                    continue  # carried out before the run was cut short: only its posting is missing
                text = self._answer(invocation, where, tracker, level, answer.id, index)
                answer_store.set_line(self.db, answer.id, index, text)
            return self.answers.publish(answer.id, tracker)

    def _answer(self, invocation, where: Where, tracker, level: list[str], answer_id: int, index: int) -> str:
        if invocation.command is None:  # unknown or malformed: the grammar's refusal says which
            assert invocation.error is not None
            help_text = f". What I understand:\n\n{grammar.help_text(self.bot_name)}" if invocation.unknown else ""
            return refusals.comment(invocation.error) + help_text
        try:
            if grammar.VERBS[invocation.verb].write:
                if where.edited_by_other:  # else anyone able to edit could borrow the author's standing
                    raise NotAllowed(f"`{invocation.verb}` was edited into {where.comment_author}'s comment by "
                                     f"@{where.author}; commands that spend bench time or change state run only "
                                     "from their author's own comment", "post it in a comment of your own",
                                     rule="the author's own comment")
                if not level:
                    level.append(tracker.permission(where.author))
                if level[0] not in WRITE_LEVELS:
                    raise NotAllowed(f"`{invocation.verb}` spends bench time or changes state, so it needs write "
                                     f"access to this repository; @{where.author} has {level[0]}",
                                     "ask a maintainer to run it", rule="write access")
            return self._carry_out(invocation.command, where, tracker, answer_id, index)
        except UserError as exc:
            return refusals.comment(exc)
        except TransientError as exc:
            return f"⏳ could not finish: {exc}. Nothing was changed; post the command again to retry."
        except Exception:
            log.exception("delivery %s: command %r failed", where.delivery_id, invocation.text,
                          extra={"delivery": where.delivery_id})
            return f"⚠️ internal error (delivery `{where.delivery_id}`); the maintainers have the log."

    def _carry_out(self, command: Command, where: Where, tracker, answer_id: int, index: int) -> str:
        match command:  # Command is a closed union: mypy checks that every verb is carried out
            case Help():
                return grammar.help_text(self.bot_name)
            case Status():
                return self._status(command, where)
            case Verify():
                return self._verify(command, where, tracker, answer_id, index)
            case Attach():
                return self._attach(command, where, tracker)
            case Detach():
                return self._detach(command, where, tracker)
            case Dup(slug=drop, of=keep):
                return self._merge_opened(where, tracker, keep, drop)
            case Merge():
                return self._merge_opened(where, tracker, *self._newer_first(where, command))
            case NotDup(a=a, b=b):
                self._records(where, a, b)
                remember_not_duplicate(self.db, where.full_name, a, b, where.author)
                self.reports.mirror(where.full_name, where.installation_id, {a, b})
                return f"noted: `{a}` and `{b}` are not duplicates; dedup will not pair them again"
            case Close(slug=slug, reason=reason):
                return self._override(where, slug, True, reason)
            case Reopen(slug=slug):
                return self._override(where, slug, False, "")
            case Cancel():
                return self._cancel(command, where, tracker)
            case Bisect(slug=slug, good=good, bad=bad):
                bisect_id = self.guards.request_bisection(where.full_name, slug, good, bad, where.author,
                                                          where.installation_id)
                return (f"queued bisection {bisect_id} of `{slug}`: each step's measurements go to the report's "
                        "issue as they are decided")
            case Digest():
                preview = self.lead.preview_digest(where.full_name, where.installation_id, datetime.now(UTC))
                return "<details><summary>the weekly digest as it stands now (a preview: nothing was posted)" \
                    f"</summary>\n\n{preview}\n</details>"
            case _:
                assert_never(command)

    def _merge_opened(self, where: Where, tracker, keep: str, drop: str) -> str:
        pull = self._person_merge(where, tracker, keep, drop)
        return f"opened #{pull}: `{drop}` merged into `{keep}` (review the merged text, then merge it)"

    def _records(self, where: Where, *slugs: str) -> dict[str, fix_store.OpenRecord]:
        records = fix_store.open_records(self.db, where.full_name)
        for slug in slugs:
            if slug not in records:
                raise NotFound(f"`{slug}` is not an open report here", "`/perf status` lists what this thread knows",
                               name=slug)
        return records

    def _newer_first(self, where: Where, command: Merge) -> tuple[str, str]:
        """The team's rule: the newer report survives and covers both; the older file is deleted."""
        records = self._records(where, command.a, command.b)
        a, b = records[command.a], records[command.b]
        return (command.a, command.b) if (a.created_at, a.slug) >= (b.created_at, b.slug) else (command.b, command.a)

    def _issue_slug(self, where: Where) -> str:
        found = record_by_issue(self.db, where.full_name, where.number)
        if found is None:
            raise NotFound("this issue mirrors no report", "name one, e.g. `/perf status perf_x`")
        return found[1]

    def _status(self, command: Status, where: Where) -> str:
        if command.slug:
            slugs = [command.slug]
        elif where.is_pull:
            slugs = sorted({f.slug for f in fix_store.fixes_of_pull(self.db, where.full_name, where.number)})
            if not slugs:
                return "this PR is attached to no report (`/perf attach perf_x` attaches it)"
        else:
            slugs = [self._issue_slug(where)]
        return "\n".join(self.answers.status_line(where.full_name, slug) for slug in slugs)

    def _pull(self, where: Where, tracker) -> PullInfo:
        if not where.is_pull:
            raise Invalid("this command works on a pull request", "write it on the PR that holds the fix")
        return PullInfo(**tracker.pull_request(where.number))

    def _verify(self, command: Verify, where: Where, tracker, answer_id: int, index: int) -> str:
        options = RunOptions(runner=command.runner or None, samples=command.samples or None)
        runs = []
        if where.is_pull:
            pull = self._pull(where, tracker)
            slugs = list(command.slugs) or sorted({f.slug for f in fix_store.fixes_of_pull(
                self.db, where.full_name, where.number) if f.state != fix_store.DETACHED}) or \
                list(slugs_fixed(pull.body, pull.head_ref))
            if not slugs:
                raise NotFound("this PR names no report it fixes",
                               "write `/perf verify perf_x`, or add `Fixes perf_x` to its description")
            self._records(where, *slugs)
            for slug in slugs:
                fix = self._attach_pull(where, pull, slug)
                runs.append(self.fixes.request_run(
                    where.full_name, slug, base=fix.base_sha, head=pull.head_sha, purpose=FIX,
                    installation_id=where.installation_id, pr_number=where.number, requested_by=where.author,
                    options=options))
        else:
            runs = [self._verify_slug(where, slug,
                                      options) for slug in list(command.slugs) or [self._issue_slug(where)]]
        self.answers.remember_runs(answer_id, index, runs)
        return self.answers.runs_text(runs)

    def _verify_slug(self, where: Where, slug: str, options: RunOptions):
        """Outside a PR: the report's open fix measured against its base, else its claim on the default branch."""
        self._records(where, slug)
        fix = next((f for f in reversed(fix_store.fixes_for(self.db, where.full_name, slug))
                    if f.state == fix_store.OPEN and f.head_sha), None)
        base, head, purpose = ((fix.base_sha, fix.head_sha, FIX) if fix and fix.head_sha  # the filter asked for a head
                               else (None, self._default_head(where), REPRODUCE))
        return self.fixes.request_run(where.full_name, slug, base=base, head=head, purpose=purpose,
                                      installation_id=where.installation_id, requested_by=where.author,
                                      options=options)

    def act_on_box(self, where: Where, verb: str, slug: str) -> str:
        """A dashboard box a writer ticked: `/perf verify SLUG` (verify, rerun) or `/perf close SLUG` (close)."""
        try:
            if verb == "close":
                return self._override(where, slug, True, "not reproduced (from the dashboard)")
            if verb == "accept":
                return self._accept_merge(where, slug)
            return self.answers.runs_text([self._verify_slug(where, slug, RunOptions())])
        except UserError as exc:
            return refusals.comment(exc)
        except TransientError as exc:
            return f"⏳ could not finish: {exc}. Nothing was changed; tick the box again to retry."
        except Exception:
            log.exception("delivery %s: dashboard action %s %s failed", where.delivery_id, verb, slug,
                          extra={"delivery": where.delivery_id})
            return f"⚠️ internal error (delivery `{where.delivery_id}`); the maintainers have the log."

    def _attach(self, command: Attach, where: Where, tracker) -> str:
        pull = self._pull(where, tracker)
        self._records(where, command.slug)
        fix = self._attach_pull(where, pull, command.slug)
        self.reports.mirror(where.full_name, where.installation_id, {command.slug})
        delta = f", {fix.token_delta:+d} tokens" if fix.token_delta is not None else ""
        return (f"attached {code_span(fix.branch)} as a fix of `{command.slug}` (+{fix.additions} -{fix.deletions} in "
                f"{fix.changed_files} file(s){delta}); `/perf verify {command.slug}` measures it")

    def _detach(self, command: Detach, where: Where, tracker) -> str:
        pull = self._pull(where, tracker)
        fix = next((f for f in fix_store.fixes_for(self.db, where.full_name, command.slug)
                    if f.branch == pull.head_ref and f.state != fix_store.DETACHED), None)
        if fix is None:
            raise NotFound(f"{code_span(pull.head_ref)} is not attached to `{command.slug}`",
                           f"`/perf status {command.slug}` lists its fixes", name=pull.head_ref)
        fix_store.set_state(self.db, fix.id, fix_store.DETACHED)
        self.reports.mirror(where.full_name, where.installation_id, {command.slug})
        return f"detached {code_span(pull.head_ref)} from `{command.slug}`; only `/perf attach` attaches it again"

    def _attach_pull(self, where: Where, pull: PullInfo, slug: str) -> fix_store.FixRow:
        with self.ctx.source.open(where.full_name, where.installation_id) as repo:
            return self.fixes.attach_by_command(repo, where.full_name, pull, slug, where.author)

    def _default_head(self, where: Where) -> str:
        with self.ctx.source.open(where.full_name, where.installation_id) as repo:
            return repo.resolve(repo.default_ref())

    def _person_merge(self, where: Where, tracker, keep: str, drop: str) -> int:
        self._records(where, keep, drop)
        if keep == drop:
            raise Invalid("a report cannot be merged into itself", "name two different reports")
        with self.ctx.source.open(where.full_name, where.installation_id) as repo:
            return propose_person_merge(self.db, where.full_name, repo, tracker, lambda branch: self.ctx.source.publish(
                where.full_name, where.installation_id, branch), keep, drop, where.author)

    def _accept_merge(self, where: Where, keep: str) -> str:
        """Merge the open merge PR of `keep` (dedup's or `/perf merge`'s); the push it makes applies the merge."""
        tracker = self.ctx.trackers(where.full_name, where.installation_id)
        branch = f"perfbot/merge-{keep}"
        pull = next((p for p in tracker.open_pulls_from(branch) if p["head_ref"] == branch), None)
        if pull is None:
            raise NotFound(f"there is no open merge PR for `{keep}` any more", "the dashboard is re-drawn",
                           name=branch)
        tracker.merge_pull(pull["number"], pull["head_sha"] or None, f"{pull['title']} (accepted by @{where.author})")
        return f"merged #{pull['number']}; the push it makes applies the merge to the records"

    def _override(self, where: Where, slug: str, closing: bool, reason: str) -> str:
        """The maintainer's explicit override, logged with who and why; the mirror then closes or reopens."""
        record = self.reports.override(where.full_name, slug, closing, where.author, where.delivery_id, reason)
        if record is None:
            wanted = "open" if closing else "closed by an override"
            raise Invalid(f"`{slug}` is not {wanted}", f"`/perf status {slug}` shows its state")
        self.reports.mirror(where.full_name, where.installation_id, {slug})
        return f"`{slug}` {'closed' if closing else 'reopened'} as a logged override by @{where.author}" + \
            (f": {reason}" if reason else "")

    def _cancel(self, command: Cancel, where: Where, tracker) -> str:
        if command.run is not None:
            run = bench_store.get_run(self.db, command.run)
            if run is None or run.repo != where.full_name:
                raise NotFound(f"there is no bench run {command.run} in this repository",
                               "`/perf cancel` alone cancels the runs of this thread", name=str(command.run))
            ids = [command.run]
        elif where.is_pull:
            ids = bench_store.unfinished_runs(self.db, where.full_name, pr_number=where.number)
        else:
            ids = bench_store.unfinished_runs(self.db, where.full_name, slug=self._issue_slug(where))
        if not ids:
            return "no queued or running bench run here to cancel"
        said = {"cancelled": "cancelled", "cancelling": "stops at its next sample", "done": "had already finished"}
        lines = []
        for run_id in ids:
            outcome = bench_store.request_cancel(self.db, run_id)
            if outcome == "cancelled":  # it never ran, so the answer that queued it must hear it from us
                self.answers.run_changed(bench_store.stored_run(self.db, run_id), tracker)
            lines.append(f"bench run {run_id}: {said[outcome]}")
        return "\n".join(lines)

