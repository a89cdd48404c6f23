"""Bench runs in the store: queued, running with progress, done with every sample; and verdicts on records."""
from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, cast

from sqlalchemy import CursorResult, func, select, update

from bot.adapters.store.engine import Database
from bot.adapters.store.models import Record, Repo
from bot.adapters.store.queue import LeaseLost
from bot.adapters.store.service_models import BenchRun
from bot.core.verify.vocabulary import RunStatus

QUEUED, RUNNING, DONE = RunStatus.QUEUED, RunStatus.RUNNING, RunStatus.DONE


def _now() -> datetime:
    return datetime.now(UTC)


def save_run(db: Database, full_name: str, slug: str, base: str | None, head: str, outcome, host: str = "",
             purpose: str = "fix") -> int:
    """A run measured outside the queue (`perfbot verify`): stored done, in one step."""
    with db.session() as session:
        run = BenchRun(full_name=full_name, slug=slug, runner=outcome.runner, base_sha=base, head_sha=head,
                       verdict=outcome.verdict, message=outcome.message, result=outcome.as_dict(), status=DONE,
                       purpose=purpose, host=host, created_at=_now(), started_at=_now(), finished_at=_now())
        session.add(run)
        session.flush()
        return run.id


def queue_run(db: Database, full_name: str, slug: str, *, base: str | None, head: str, purpose: str,
              pr_number: int | None = None, requested_by: str = "", runner: str = "",
              options: dict | None = None) -> int:
    """`options`: what a command asked for (runner, samples) and where its answer line is."""
    with db.session() as session:
        run = BenchRun(full_name=full_name, slug=slug, runner=runner, base_sha=base, head_sha=head, verdict="",
                       message="queued", result={}, status=QUEUED, purpose=purpose, pr_number=pr_number,
                       requested_by=requested_by, options=options or {}, created_at=_now())
        session.add(run)
        session.flush()
        return run.id


def start_run(db: Database, run_id: int, runner: str, host: str, fence=None) -> None:
    _fenced(db, run_id, fence, status=RUNNING, runner=runner, host=host, started_at=_now(), message="running")


def save_progress(db: Database, run_id: int, progress: dict, partial: dict | None = None, fence=None) -> None:
    """Where a running run is, and its samples so far (the live page and comment show them)."""
    _fenced(db, run_id, fence, progress=progress, **({} if partial is None else {"result": partial}))


def finish_run(db: Database, run_id: int, verdict: str, message: str, result: dict, fence=None) -> None:
    _fenced(db, run_id, fence, status=DONE, verdict=verdict, message=message, result=result, finished_at=_now())


def _fenced(db: Database, run_id: int, fence, **values) -> None:
    """Write the run only while `fence` holds (the queue's clause: its delivery's claim is still this worker's);
    LeaseLost when it does not, so a worker whose run was taken over writes no progress or verdict over it."""
    with db.session() as session:
        statement = update(BenchRun).where(BenchRun.id == run_id)
        if fence is not None:
            statement = statement.where(fence)
        if cast(CursorResult[Any], session.execute(statement.values(**values))).rowcount != 1:
            if fence is not None:
                raise LeaseLost(f"bench run {run_id}: its delivery was taken over; this write is refused")
            raise LookupError(f"no bench run {run_id}")


def set_options(db: Database, run_id: int, **values) -> None:
    with db.session() as session:
        run = session.get_one(BenchRun, run_id)
        run.options = {**(run.options or {}), **values}


def add_follower(db: Database, run_id: int, answer: dict) -> None:
    """An answer line to keep current as the run goes on (`options.answers`); row-locked where the store can."""
    with db.session() as session:
        run = session.get_one(BenchRun, run_id, with_for_update=True)
        followers = list((run.options or {}).get("answers", []))
        if answer not in followers:
            run.options = {**(run.options or {}), "answers": [*followers, answer]}


def unfinished_run(db: Database, full_name: str, slug: str, head: str, purpose: str) -> int | None:
    """The queued or running run of this record, head and purpose, if any."""
    with db.session() as session:
        return session.scalars(select(BenchRun.id).where(
            BenchRun.full_name == full_name, BenchRun.slug == slug, BenchRun.head_sha == head,
            BenchRun.purpose == purpose, BenchRun.status != DONE).order_by(BenchRun.id).limit(1)).first()


def request_cancel(db: Database, run_id: int) -> str:
    """A queued run is cancelled at once; a running one stops at its next sample. Returns what happened."""
    with db.session() as session:
        run = session.get(BenchRun, run_id)
        if run is None:
            return "unknown"
        if run.status == DONE:
            return "done"
        if run.status == QUEUED:
            run.status, run.verdict, run.message, run.finished_at = DONE, "cancelled", "cancelled before it ran", _now()
            return "cancelled"
        run.cancel_requested = True
        return "cancelling"


def cancel_requested(db: Database, run_id: int) -> bool:
    with db.session() as session:
        return bool(session.scalar(select(BenchRun.cancel_requested).where(BenchRun.id == run_id)))


def unfinished_runs(db: Database, full_name: str, *, pr_number: int | None = None,
                    slug: str | None = None) -> list[int]:
    with db.session() as session:
        query = select(BenchRun.id).where(BenchRun.full_name == full_name, BenchRun.status != DONE)
        if pr_number is not None:
            query = query.where(BenchRun.pr_number == pr_number)
        if slug is not None:
            query = query.where(BenchRun.slug == slug)
        return list(session.scalars(query.order_by(BenchRun.id)))


def get_run(db: Database, run_id: int) -> dict | None:
    return db.row(BenchRun, run_id, _as_dict)


def stored_run(db: Database, run_id: int) -> dict:
    """A run known to be stored (this flow wrote it); sqlalchemy's NoResultFound if it is not."""
    return db.stored_row(BenchRun, run_id, _as_dict)


def passing_run(db: Database, full_name: str, slug: str, head_sha: str) -> dict | None:
    """The latest fix verification of `slug` that passed on exactly this head: what allows a close."""
    with db.session() as session:
        run = session.scalars(select(BenchRun).where(
            BenchRun.full_name == full_name, BenchRun.slug == slug, BenchRun.head_sha == head_sha,
            BenchRun.status == DONE, BenchRun.purpose == "fix", BenchRun.verdict == "pass")
            .order_by(BenchRun.id.desc())).first()
        return _as_dict(run) if run else None


def runs_for(db: Database, slug: str, limit: int = 10, full_name: str | None = None) -> list[dict]:
    with db.session() as session:
        query = select(BenchRun).where(BenchRun.slug == slug)
        if full_name is not None:
            query = query.where(BenchRun.full_name == full_name)
        rows = session.scalars(query.order_by(BenchRun.created_at.desc(), BenchRun.id.desc()).limit(limit))
        return [_as_dict(r) for r in rows]


def last_options(db: Database, full_name: str, slug: str, purpose: str) -> dict | None:
    """The options of a record's latest run for `purpose` (what it measured), None when it has none."""
    with db.session() as session:
        run = session.scalars(select(BenchRun).where(BenchRun.full_name == full_name, BenchRun.slug == slug,
                                                     BenchRun.purpose == purpose)
                              .order_by(BenchRun.id.desc()).limit(1)).first()
        return dict(run.options or {}) if run is not None else None


def latest_finished(db: Database) -> dict[tuple[str, str], dict]:
    """Each record's last finished run, by (repository, slug): what `perfbot list` shows as its last verdict."""
    with db.session() as session:
        last = (select(func.max(BenchRun.id)).where(BenchRun.status == DONE)
                .group_by(BenchRun.full_name, BenchRun.slug).scalar_subquery())
        return {(r.full_name,
                 r.slug): _as_dict(r) for r in session.scalars(select(BenchRun).where(BenchRun.id.in_(last)))}


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


def _as_dict(run: BenchRun) -> dict:
    return {"id": run.id, "repo": run.full_name, "slug": run.slug, "runner": run.runner, "host": run.host,
            "base": run.base_sha, "head": run.head_sha, "verdict": run.verdict, "message": run.message,
            "status": run.status, "purpose": run.purpose, "pr": run.pr_number, "requested_by": run.requested_by,
            "progress": run.progress or {}, "result": run.result or {}, "options": run.options or {},
            "at": run.created_at.isoformat()}
