"""Posted digests in the store: one per repository and ISO week, kept for the dashboard and for exactly-once."""
from __future__ import annotations

from datetime import UTC, datetime

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError

from bot.adapters.store.engine import Database
from bot.adapters.store.service_models import DigestPost


def _as_dict(post: DigestPost) -> dict:
    return {"id": post.id, "repo": post.full_name, "week": post.week, "start": post.window_start.isoformat(),
            "end": post.window_end.isoformat(), "body": post.body, "summary": post.summary or {},
            "issue": post.issue_number, "at": post.created_at.isoformat()}


def claim_week(db: Database, full_name: str, week: str, start: datetime, end: datetime, body: str,
               summary: dict) -> dict | None:
    """Store this week's digest unless one is stored already: None then, so it is never posted twice."""
    try:
        with db.session() as session:
            post = DigestPost(full_name=full_name, week=week, window_start=start, window_end=end, body=body,
                              summary=summary, created_at=datetime.now(UTC))
            session.add(post)
            session.flush()
            return _as_dict(post)
    except IntegrityError:
        return None  # another worker (or an earlier run before a restart) has it


def set_issue(db: Database, digest_id: int, number: int) -> None:
    with db.session() as session:
        session.get_one(DigestPost, digest_id).issue_number = number


def week_digest(db: Database, full_name: str, week: str) -> dict | None:
    with db.session() as session:
        post = session.scalars(select(DigestPost).where(DigestPost.full_name == full_name,
                                                         DigestPost.week == week)).first()
        return _as_dict(post) if post else None


def list_digests(db: Database, full_name: str | None = None, limit: int = 52) -> list[dict]:
    """Newest first; each with its markdown `body` and the `summary` numbers."""
    with db.session() as session:
        query = select(DigestPost).order_by(DigestPost.window_end.desc(), DigestPost.id.desc()).limit(limit)
        if full_name is not None:
            query = query.where(DigestPost.full_name == full_name)
        return [_as_dict(post) for post in session.scalars(query)]


def get_digest(db: Database, digest_id: int) -> dict | None:
    return db.row(DigestPost, digest_id, _as_dict)


def stored_digest(db: Database, digest_id: int) -> dict:
    """A digest known to be stored (this flow wrote it); sqlalchemy's NoResultFound if it is not."""
    return db.stored_row(DigestPost, digest_id, _as_dict)
