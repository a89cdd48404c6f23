"""What the long-lived retrieval index asks the store: which records are live with which content, and their text."""
from __future__ import annotations

from sqlalchemy import func, select

from bot.adapters.store.engine import Database
from bot.adapters.store.models import Record, Repo, Revision
from bot.core.parse import parse

_LIVE = ("open", "closed")  # closed by a person still counts; merged and deleted records do not
_CHUNK = 500  # slugs per IN list: well under SQLite's bound on parameters


def live_hashes(db: Database, repo_key: str) -> dict[str, str]:
    """slug -> content hash of every live record: one narrow query, the cost of a step of the index."""
    query = (select(Record.slug, Record.content_hash).join(Repo, Repo.id == Record.repo_id)
             .where(Repo.key == repo_key, Record.state.in_(_LIVE)))
    with db.session() as session:
        return {slug: content_hash or "" for slug, content_hash in session.execute(query)}


def live_reports_named(db: Database, repo_key: str, slugs: set[str]) -> list:
    """The parsed latest content of the live records among `slugs` (those that parse)."""
    latest = (select(Revision.record_id, func.max(Revision.id).label("rev_id"))
              .where(Revision.content.is_not(None)).group_by(Revision.record_id).subquery())
    names = sorted(slugs)
    rows = []
    with db.session() as session:
        for start in range(0, len(names), _CHUNK):
            rows += session.execute(
                select(Record.path, Revision.content).join(Repo, Repo.id == Record.repo_id)
                .join(latest, latest.c.record_id == Record.id).join(Revision, Revision.id == latest.c.rev_id)
                .where(Repo.key == repo_key, Record.state.in_(_LIVE), Record.slug.in_(names[start:start + _CHUNK]))
                .order_by(Record.slug)).all()
    parsed = (parse(path, content.encode("utf-8")).record for path, content in rows)
    return [record for record in parsed if record is not None]
