"""Bench runs in the store: every verification kept with its samples, listed with the record."""
from __future__ import annotations

from datetime import datetime, timezone

from sqlalchemy import select

from bot.adapters.store.engine import Database
from bot.adapters.store.service_models import BenchRun


def save_run(db: Database, repo_key: str, slug: str, base: str | None, head: str, outcome) -> int:
    with db.session() as session:
        run = BenchRun(repo_key=repo_key, slug=slug, runner=outcome.runner, base_sha=base, head_sha=head,
                       verdict=outcome.verdict, message=outcome.message, result=outcome.as_dict(),
                       created_at=datetime.now(timezone.utc))
        session.add(run)
        session.flush()
        return run.id


def runs_for(db: Database, slug: str, limit: int = 10) -> list[dict]:
    with db.session() as session:
        rows = session.scalars(select(BenchRun).where(BenchRun.slug == slug)
                               .order_by(BenchRun.created_at.desc(), BenchRun.id.desc()).limit(limit))
        return [{"id": r.id, "runner": r.runner, "base": r.base_sha, "head": r.head_sha, "verdict": r.verdict,
                 "message": r.message, "at": r.created_at.isoformat()} for r in rows]
