"""perfbot's answer to a comment with commands: one marked comment, a line per command, kept current while
the bench runs a command queued go on, so the person who asked watches one place."""
from __future__ import annotations

from bot.adapters.store import answer_store
from bot.adapters.store.bench import bench_store
from bot.adapters.store.bench.fix_store import fixes_for, record_standing
from bot.adapters.store.engine import Database
from bot.adapters.store.lead.standing_queries import repo_standings
from bot.adapters.store.locks import repo_lock
from bot.adapters.templates import render
from bot.core.lead import wording
from bot.core.tracker.untrusted import cell
from bot.core.verify import bench_view
from bot.core.verify import verdict_words as words
from bot.core.verify.bench_run import BenchRun, Follower
from bot.core.verify.vocabulary import RunStatus

ANSWER_LOCKS = 64  # answers share this many locks per repository: on SQLite each lock is a file that stays


def answer_marker(source_comment_id: int) -> str:
    return f"<!-- perfbot:answer {source_comment_id} -->"


class Answers:
    def __init__(self, db: Database) -> None:
        self.db = db

    def publish(self, answer_id: int, tracker) -> answer_store.AnswerRow:
        """Post the answer as it is stored (one comment, found by id or marker, else made), then mark the lines
        it shows posted: recorded after the effect, so a crash between the two posts again, never not at all.

        The command's own run and the bench runs it queued publish from different threads and processes; one
        lock per comment makes the find-or-create of its one answer atomic. It is the innermost lock: nothing
        else is waited for while it is held.
        """
        row = answer_store.stored_answer(self.db, answer_id)
        with repo_lock(self.db, f"{row.full_name} answers {row.source_comment_id % ANSWER_LOCKS}"):
            row = answer_store.stored_answer(self.db, answer_id)  # as the last holder left it
            marker = answer_marker(row.source_comment_id)
            body = render("command_answer.md.j2", marker=marker, author=row.author,
                          lines=[{**line, "code": bench_view.code_span(line["command"])} for line in row.lines])
            comment_id = tracker.upsert_comment(row.issue_number, marker, body, row.answer_comment_id)
            return answer_store.posted(self.db, answer_id, comment_id, {
                index: line["answer"] for index, line in enumerate(row.lines)
                if answer_store.line_state(line) == answer_store.ANSWERED})

    def remember_runs(self, answer_id: int, index: int, runs: list[int]) -> None:
        """The line's runs, and each run told to keep this line current; a run two commands share tells both."""
        answer_store.set_line(self.db, answer_id, index, runs=runs)
        for run in runs:
            bench_store.add_follower(self.db, run, Follower(answer_id, index))

    def runs_text(self, runs: list[int]) -> str:
        return "\n".join(self.run_line(bench_store.stored_run(self.db, run)) for run in runs)

    def run_line(self, run: BenchRun) -> str:
        if run.status == RunStatus.QUEUED:
            sides = f"base `{run.base[:12]}` vs head `{run.head[:12]}`" if run.base else \
                f"the claim at `{run.head[:12]}`"
            return f"⏳ bench run {run.id} queued: `{run.slug}`, {sides}"
        if run.status == RunStatus.RUNNING:
            return "⏳ " + bench_view.progress_line(run.slug, run.progress, run.host) + f" (bench run {run.id})"
        said, shown = words.text(words.of_run(run), run.verdict or ""), bench_view.status_description(run)
        return (f"{bench_view.verdict_icon(run)} bench run {run.id}, `{run.slug}`: "
                f"**{said}**{shown.removeprefix(said)}")  # "**fixed** 1.11x [0.74, 1.99]"

    def run_changed(self, run: BenchRun, tracker) -> None:
        """A bench run moved on: the answer line of every command that asked for it says so."""
        for where in run.followers:
            row = answer_store.get_answer(self.db, where.id)
            if row is None:
                continue
            runs = row.lines[where.index].get("runs") or [run.id]
            text = "\n".join(self.run_line(run if other == run.id else bench_store.stored_run(self.db, other))
                             for other in runs)
            answer_store.set_line(self.db, where.id, where.index, text)
            self.publish(where.id, tracker)

    def status_line(self, full_name: str, slug: str) -> str:
        standing = record_standing(self.db, full_name, slug)
        if standing is None:
            return f"`{slug}`: no such report here"
        state = standing[0]
        runs = bench_store.runs_for(self.db, slug, limit=1, full_name=full_name)
        last = (f"; last bench run {runs[0].id}: {words.text(words.of_run(runs[0]), runs[0].status)}"
                if runs else "")
        fixes = ", ".join(f"{bench_view.code_span(f.branch)} ({f.state})" for f in fixes_for(self.db, full_name,
                                                                                             slug)) or "none"
        found = repo_standings(self.db, full_name).get(slug)  # the words of every other view
        said = cell(wording.said(found)) if found else "not measured"
        return f"`{slug}`: {state}; {said}; fixes {fixes}{last}"
