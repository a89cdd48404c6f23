"""Every record's standing, read from the store once per request: the one source of the dashboard's tiles,
rankings, records list and record page, `perfbot list/show` and the issue body (core/lead/standing.py)."""
from __future__ import annotations

from datetime import UTC, datetime

from sqlalchemy import func, select

from bot.adapters.store.engine import Database
from bot.adapters.store.lead.facts_queries import campaign_facts
from bot.adapters.store.models import Record, Repo
from bot.adapters.store.service_models import BenchRun, Bisection, Fix
from bot.core.lead.standing import Standing, standings_of

EPOCH = datetime(2000, 1, 1, tzinfo=UTC)
FAR = datetime(9999, 1, 1, tzinfo=UTC)


def repo_standings(db: Database, full_name: str) -> dict[str, Standing]:
    """slug -> standing of one repository's records, as everything stands now."""
    facts = campaign_facts(db, full_name, EPOCH, FAR)
    return standings_of(facts.records, facts.runs, facts.fixes, facts.bisections)


def all_standings(db: Database, full_name: str | None = None) -> dict[tuple[str, str], Standing]:
    """(repository, slug) -> standing, for every repository in the store (or the one named)."""
    with db.session() as session:
        names = [full_name] if full_name else list(session.scalars(select(Repo.full_name).order_by(Repo.full_name)))
    return {(name, slug): standing for name in names for slug, standing in repo_standings(db, name).items()}


def standings_version(db: Database, full_name: str) -> tuple:
    """What every standing of a repository is computed from, in one cheap read: a caller holding standings
    computes them again only when this changes (a record's state set by a person or a verdict, a run finished,
    a fix attached or merged, a bisection ended)."""
    with db.session() as session:
        states = tuple((state, n) for state, n in session.execute(
            select(Record.state, func.count()).join(Repo).where(Repo.full_name == full_name)
            .group_by(Record.state).order_by(Record.state)))
        runs = session.execute(select(func.count(), func.max(BenchRun.id), func.max(BenchRun.finished_at))
                               .where(BenchRun.full_name == full_name, BenchRun.status == "done")).one()
        fixes = session.execute(select(func.count(), func.max(Fix.id)).where(Fix.full_name == full_name)).one()
        merged = session.scalar(select(func.count()).select_from(Fix)
                                .where(Fix.full_name == full_name, Fix.state == "merged"))
        found = session.scalar(select(func.count()).select_from(Bisection)
                               .where(Bisection.full_name == full_name, Bisection.culprit_sha.is_not(None)))
    return (states, *runs, *fixes, merged, found)
