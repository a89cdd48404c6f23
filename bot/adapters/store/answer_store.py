"""Answers to command comments in the store: one row per comment with commands, a line per command."""
from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

from sqlalchemy import select

from bot.adapters.store.engine import Database
from bot.adapters.store.service_models import CommandAnswer

# A line's life: its command stored (ASKED, shown as "…"), carried out (ANSWERED), and in the comment (POSTED).
# Only a POSTED line is done: a run cut short carries out an ASKED line again and posts an ANSWERED one.
ASKED, ANSWERED, POSTED = "asked", "answered", "posted"


def line_state(line: dict) -> str:
    """Lines stored before lines had states were posted when they were written."""
    return line.get("state", POSTED)


@dataclass(frozen=True)
class AnswerRow:
    id: int
    full_name: str
    issue_number: int
    source_comment_id: int
    answer_comment_id: int | None
    author: str
    # {"command": text as written, "line": its line in the comment, "answer": markdown, "runs": bench run ids,
    #  "state": ASKED | ANSWERED | POSTED}
    lines: tuple[dict, ...]


def _row(answer: CommandAnswer) -> AnswerRow:
    return AnswerRow(answer.id, answer.full_name, answer.issue_number, answer.source_comment_id,
                     answer.answer_comment_id, answer.author, tuple(answer.lines or ()))


def open_answer(db: Database, full_name: str, issue_number: int, source_comment_id: int, author: str) -> AnswerRow:
    """The answer to this comment, made on its first command; an edited comment adds lines to the same one."""
    with db.session() as session:
        answer = session.scalars(select(CommandAnswer).where(
            CommandAnswer.full_name == full_name, CommandAnswer.source_comment_id == source_comment_id)).first()
        if answer is None:
            now = datetime.now(UTC)
            answer = CommandAnswer(full_name=full_name, issue_number=issue_number, source_comment_id=source_comment_id,
                                   author=author, lines=[], created_at=now, updated_at=now)
            session.add(answer)
            session.flush()
        return _row(answer)


def add_line(db: Database, answer_id: int, command: str, answer: str = "…", line: int | None = None) -> int:
    """Append a command's line; returns its index, by which later progress finds it."""
    with db.session() as session:
        row = session.get_one(CommandAnswer, answer_id)
        row.lines = [*row.lines, {"command": command, "line": line, "answer": answer, "runs": [], "state": ASKED}]
        row.updated_at = datetime.now(UTC)
        return len(row.lines) - 1


def set_line(db: Database, answer_id: int, index: int, answer: str | None = None,
             runs: list[int] | None = None) -> AnswerRow:
    with db.session() as session:
        row = session.get_one(CommandAnswer, answer_id)
        lines = [dict(line) for line in row.lines]
        if answer is not None:
            lines[index].update(answer=answer, state=ANSWERED)  # posted when a comment shows this text
        if runs is not None:
            lines[index]["runs"] = runs
        row.lines, row.updated_at = lines, datetime.now(UTC)
        return _row(row)


def get_answer(db: Database, answer_id: int) -> AnswerRow | None:
    return db.row(CommandAnswer, answer_id, _row)


def stored_answer(db: Database, answer_id: int) -> AnswerRow:
    """An answer known to be stored (this flow wrote it); sqlalchemy's NoResultFound if it is not."""
    return db.stored_row(CommandAnswer, answer_id, _row)


def posted(db: Database, answer_id: int, comment_id: int, shown: dict[int, str]) -> AnswerRow:
    """The answer comment `comment_id` now shows `shown` (line index -> answer text): those lines are posted,
    unless their text changed since the comment was written (a bench run moved on), which waits for the next."""
    with db.session() as session:
        row = session.get_one(CommandAnswer, answer_id)
        lines = [dict(line) for line in row.lines]
        for index, text in shown.items():
            if line_state(lines[index]) == ANSWERED and lines[index]["answer"] == text:
                lines[index]["state"] = POSTED
        row.lines, row.answer_comment_id = lines, comment_id
        return _row(row)
