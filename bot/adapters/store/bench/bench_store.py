"""Bench runs in the store: queued, running with progress, done with every sample; and verdicts on records.

The JSON columns (progress, result, options) are written from and read into their types (core/verify/run_parts.py)
here only: a row of any earlier version reads, its missing keys at their defaults."""
from __future__ import annotations

import dataclasses
from datetime import UTC, datetime
from typing import Any, cast

from sqlalchemy import CursorResult, func, select, update

from bot.adapters.store.engine import Database
from bot.adapters.store.models import Record, Repo
from bot.adapters.store.queue import LeaseLost
from bot.adapters.store.service_models import BenchRun as BenchRunRow
from bot.core.verify.bench_run import BenchRun
from bot.core.verify.run_parts import Follower, RunOptions, RunProgress, RunResult
from bot.core.verify.vocabulary import Purpose, RunStatus, Test

QUEUED, RUNNING, DONE = RunStatus.QUEUED, RunStatus.RUNNING, RunStatus.DONE


def _now() -> datetime:
    return datetime.now(UTC)


def save_run(db: Database, full_name: str, slug: str, base: str | None, head: str, result: RunResult,
             host: str = "", purpose: Purpose = Purpose.FIX, options: RunOptions | None = None) -> int:
    """A run measured outside the queue (`perfbot verify`): stored done, in one step."""
    with db.session() as session:
        run = BenchRunRow(full_name=full_name, slug=slug, runner=result.runner, base_sha=base, head_sha=head,
                          verdict=result.verdict or "", message=result.message, result=result.as_dict(), status=DONE,
                          purpose=purpose, host=host, options=(options or RunOptions()).as_dict(), created_at=_now(),
                          started_at=_now(), finished_at=_now())
        session.add(run)
        session.flush()
        return run.id


def queue_run(db: Database, full_name: str, slug: str, *, base: str | None, head: str, purpose: Purpose,
              pr_number: int | None = None, requested_by: str = "", runner: str = "",
              options: RunOptions | None = None) -> int:
    """`options`: what a command asked for (runner, samples) and where its answer line is."""
    with db.session() as session:
        run = BenchRunRow(full_name=full_name, slug=slug, runner=runner, base_sha=base, head_sha=head, verdict="",
                          message="queued", result={}, status=QUEUED, purpose=purpose, pr_number=pr_number,
                          requested_by=requested_by, options=(options or RunOptions()).as_dict(), created_at=_now())
        session.add(run)
        session.flush()
        return run.id


def start_run(db: Database, run_id: int, runner: str, host: str, fence=None) -> None:
    _fenced(db, run_id, fence, status=RUNNING, runner=runner, host=host, started_at=_now(), message="running")


def save_progress(db: Database, run_id: int, progress: RunProgress, partial: RunResult | None = None,
                  fence=None) -> None:
    """Where a running run is, and its samples so far (the live page and comment show them)."""
    _fenced(db, run_id, fence, progress=progress.as_dict(),
            **({} if partial is None else {"result": partial.as_dict()}))


def finish_run(db: Database, run_id: int, verdict: Test, message: str, result: RunResult, fence=None) -> None:
    _fenced(db, run_id, fence, status=DONE, verdict=verdict, message=message, result=result.as_dict(),
            finished_at=_now())


def _fenced(db: Database, run_id: int, fence, **values) -> None:
    """Write the run only while `fence` holds (the queue's clause: its delivery's claim is still this worker's);
    LeaseLost when it does not, so a worker whose run was taken over writes no progress or verdict over it."""
    with db.session() as session:
        statement = update(BenchRunRow).where(BenchRunRow.id == run_id)
        if fence is not None:
            statement = statement.where(fence)
        if cast(CursorResult[Any], session.execute(statement.values(**values))).rowcount != 1:
            if fence is not None:
                raise LeaseLost(f"bench run {run_id}: its delivery was taken over; this write is refused")
            raise LookupError(f"no bench run {run_id}")


def set_options(db: Database, run_id: int, **values) -> None:
    """Change some of a run's options (RunOptions' fields; a name it lacks is a TypeError), keep the rest."""
    with db.session() as session:
        run = session.get_one(BenchRunRow, run_id)
        run.options = dataclasses.replace(RunOptions.from_json(run.options), **values).as_dict()


def add_follower(db: Database, run_id: int, answer: Follower) -> None:
    """An answer line to keep current as the run goes on (`options.answers`); row-locked where the store can."""
    with db.session() as session:
        run = session.get_one(BenchRunRow, run_id, with_for_update=True)
        options = RunOptions.from_json(run.options)
        if answer not in options.answers:
            run.options = dataclasses.replace(options, answers=(*options.answers, answer)).as_dict()


def unfinished_run(db: Database, full_name: str, slug: str, head: str, purpose: Purpose) -> int | None:
    """The queued or running run of this record, head and purpose, if any."""
    with db.session() as session:
        return session.scalars(select(BenchRunRow.id).where(
            BenchRunRow.full_name == full_name, BenchRunRow.slug == slug, BenchRunRow.head_sha == head,
            BenchRunRow.purpose == purpose, BenchRunRow.status != DONE).order_by(BenchRunRow.id).limit(1)).first()


def request_cancel(db: Database, run_id: int) -> str:
    """A queued run is cancelled at once; a running one stops at its next sample. Returns what happened."""
    with db.session() as session:
        run = session.get(BenchRunRow, run_id)
        if run is None:
            return "unknown"
        if run.status == DONE:
            return "done"
        if run.status == QUEUED:
            run.status, run.verdict, run.finished_at = DONE, Test.CANCELLED, _now()
            run.message = "cancelled before it ran"
            return "cancelled"
        run.cancel_requested = True
        return "cancelling"


def cancel_requested(db: Database, run_id: int) -> bool:
    with db.session() as session:
        return bool(session.scalar(select(BenchRunRow.cancel_requested).where(BenchRunRow.id == run_id)))


def unfinished_runs(db: Database, full_name: str, *, pr_number: int | None = None,
                    slug: str | None = None) -> list[int]:
    with db.session() as session:
        query = select(BenchRunRow.id).where(BenchRunRow.full_name == full_name, BenchRunRow.status != DONE)
        if pr_number is not None:
            query = query.where(BenchRunRow.pr_number == pr_number)
        if slug is not None:
            query = query.where(BenchRunRow.slug == slug)
        return list(session.scalars(query.order_by(BenchRunRow.id)))


def get_run(db: Database, run_id: int) -> BenchRun | None:
    return db.row(BenchRunRow, run_id, to_run)


def stored_run(db: Database, run_id: int) -> BenchRun:
    """A run known to be stored (this flow wrote it); sqlalchemy's NoResultFound if it is not."""
    return db.stored_row(BenchRunRow, run_id, to_run)


def passing_run(db: Database, full_name: str, slug: str, head_sha: str) -> BenchRun | None:
    """The latest fix verification of `slug` that passed on exactly this head: what allows a close."""
    with db.session() as session:
        run = session.scalars(select(BenchRunRow).where(
            BenchRunRow.full_name == full_name, BenchRunRow.slug == slug, BenchRunRow.head_sha == head_sha,
            BenchRunRow.status == DONE, BenchRunRow.purpose == Purpose.FIX, BenchRunRow.verdict == Test.PASS)
            .order_by(BenchRunRow.id.desc())).first()
        return to_run(run) if run else None


def runs_for(db: Database, slug: str, limit: int = 10, full_name: str | None = None) -> list[BenchRun]:
    with db.session() as session:
        query = select(BenchRunRow).where(BenchRunRow.slug == slug)
        if full_name is not None:
            query = query.where(BenchRunRow.full_name == full_name)
        rows = session.scalars(query.order_by(BenchRunRow.created_at.desc(), BenchRunRow.id.desc()).limit(limit))
        return [to_run(r) for r in rows]


def last_options(db: Database, full_name: str, slug: str, purpose: Purpose) -> RunOptions | None:
    """The options of a record's latest run for `purpose` (what it measured), None when it has none."""
    with db.session() as session:
        run = session.scalars(select(BenchRunRow).where(BenchRunRow.full_name == full_name, BenchRunRow.slug == slug,
                                                     BenchRunRow.purpose == purpose)
                              .order_by(BenchRunRow.id.desc()).limit(1)).first()
        return RunOptions.from_json(run.options) if run is not None else None


def latest_finished(db: Database) -> dict[tuple[str, str], BenchRun]:
    """Each record's last finished run, by (repository, slug): what `perfbot list` shows as its last verdict."""
    with db.session() as session:
        last = (select(func.max(BenchRunRow.id)).where(BenchRunRow.status == DONE)
                .group_by(BenchRunRow.full_name, BenchRunRow.slug).scalar_subquery())
        return {(r.full_name,
                 r.slug): to_run(r) for r in session.scalars(select(BenchRunRow).where(BenchRunRow.id.in_(last)))}


def set_record_result(db: Database, full_name: str, slug: str, **values) -> bool:
    """Store `verdict`/`verdict_run_id` or `reproduced` on the record; False when it is not a record."""
    with db.session() as session:
        record = session.scalars(select(Record).join(Repo).where(Repo.full_name == full_name,
                                                                 Record.slug == slug)).first()
        if record is None:
            return False
        for key, value in values.items():
            setattr(record, key, value)
        return True


def to_run(row: BenchRunRow) -> BenchRun:
    """The stored row as the typed run every reader gets (the dashboard's queries too): its JSON parsed here."""
    return BenchRun(id=row.id, repo=row.full_name, slug=row.slug, purpose=Purpose(row.purpose),
                    status=RunStatus(row.status), head=row.head_sha, base=row.base_sha,
                    verdict=Test(row.verdict) if row.verdict else None, message=row.message, runner=row.runner,
                    host=row.host, pr=row.pr_number, requested_by=row.requested_by,
                    progress=RunProgress.from_json(row.progress), result=RunResult.from_json(row.result),
                    options=RunOptions.from_json(row.options), created=row.created_at,
                    started=row.started_at, finished=row.finished_at)
