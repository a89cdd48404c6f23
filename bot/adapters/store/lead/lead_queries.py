"""What the dashboard issue and the notices need from the store, beyond the campaign's facts."""
from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

from sqlalchemy import func, select

from bot.adapters.store.engine import Database
from bot.adapters.store.lead.facts_queries import campaign_facts
from bot.adapters.store.models import Record, Repo, Revision
from bot.adapters.store.service_models import IssueMirror
from bot.core.lead.facts import CampaignFacts

EPOCH = datetime(2000, 1, 1, tzinfo=UTC)


@dataclass(frozen=True)
class OpenText:
    """An open record's latest text: notices read its root cause and count its lint errors."""

    slug: str
    path: str
    content: str
    errors: int
    supersedes: tuple[str, ...]


def lead_facts(db: Database, full_name: str, now: datetime) -> tuple[CampaignFacts, dict[str, int], list[OpenText]]:
    """Everything up to `now`: the campaign's facts, each record's issue number, and the open records' texts."""
    facts = campaign_facts(db, full_name, EPOCH, now)
    latest = (select(Revision.record_id, func.max(Revision.id).label("rev_id"))
              .where(Revision.content.is_not(None)).group_by(Revision.record_id).subquery())
    with db.session() as session:
        issues = dict(session.execute(
            select(Record.slug, IssueMirror.number).join(Repo, Repo.id == Record.repo_id)
            .join(IssueMirror, IssueMirror.record_id == Record.id).where(Repo.full_name == full_name)).all())
        texts = [OpenText(record.slug, record.path, revision.content or "", record.errors or 0,
                          tuple(record.supersedes or ()))
                 for record, revision in session.execute(
                     select(Record, Revision).join(Repo, Repo.id == Record.repo_id)
                     .join(latest, latest.c.record_id == Record.id).join(Revision, Revision.id == latest.c.rev_id)
                     .where(Repo.full_name == full_name, Record.state == "open").order_by(Record.slug))]
    return facts, issues, texts
