"""What the long-lived retrieval index asks the store: which records are live with which content, their text,
and the features already computed for a content."""
from __future__ import annotations

import hashlib

from sqlalchemy import func, select
from sqlalchemy.exc import IntegrityError

from bot.adapters.store.engine import Database
from bot.adapters.store.models import Record, Repo, Revision
from bot.adapters.store.service_models import RetrievalFeatures
from bot.core.dedup.similarity import FEATURES_VERSION, Features
from bot.core.reports.parse import parse
from bot.core.reports.records import ReadingOptions

_LIVE = ("open", "closed")  # closed by a person still counts; merged and deleted records do not
_CHUNK = 500  # slugs per IN list: well under SQLite's bound on parameters


def live_hashes(db: Database, full_name: str) -> dict[str, str]:
    """slug -> content hash of every live record: one narrow query, the cost of a step of the index."""
    query = (select(Record.slug, Record.content_hash).join(Repo, Repo.id == Record.repo_id)
             .where(Repo.full_name == full_name, Record.state.in_(_LIVE)))
    with db.session() as session:  # Core rows, not the ORM's: half the time at 100,000 records
        return {slug: content_hash or "" for slug, content_hash in session.connection().execute(query)}


def features_version(reading: ReadingOptions) -> str:
    """The features' version for reports read this way: a repository's own fence tags change which block is the
    program, so features stored under other tags are not reused."""
    if not reading.language_tags:
        return FEATURES_VERSION
    return f"{FEATURES_VERSION}+{hashlib.sha256(' '.join(reading.language_tags).encode()).hexdigest()[:12]}"


def live_reports_named(db: Database, full_name: str, slugs: set[str],
                       reading: ReadingOptions = ReadingOptions()) -> list:
    """The parsed latest content of the live records among `slugs` (those that parse), read the repository's way."""
    # The latest revision with content of each named record, through the index on revisions.record_id:
    # grouping every revision of the repository first cost a scan of all of them per candidate.
    latest = (select(func.max(Revision.id)).where(Revision.record_id == Record.id, Revision.content.is_not(None))
              .correlate(Record).scalar_subquery())
    names = sorted(slugs)
    rows: list[tuple[str, str | None]] = []
    with db.session() as session:
        for start in range(0, len(names), _CHUNK):
            rows += session.execute(
                select(Record.path, Revision.content).join(Repo, Repo.id == Record.repo_id)
                .join(Revision, Revision.id == latest)
                .where(Repo.full_name == full_name, Record.state.in_(_LIVE),
                       Record.slug.in_(names[start:start + _CHUNK]))
                .order_by(Record.slug)).all()
    parsed = (parse(path, content.encode("utf-8"), reading).record for path, content in rows if content is not None)
    return [record for record in parsed if record is not None]


Stored = tuple[tuple[str, ...], frozenset[str], frozenset[str]]  # words, shingles, places


def stored_features(db: Database, hashes: set[str], version: str = FEATURES_VERSION) -> dict[str, Stored]:
    """content hash -> (words, shingles, locations) for the hashes whose features are stored at this version."""
    found = {}
    wanted = sorted(hashes)
    with db.session() as session:
        for start in range(0, len(wanted), _CHUNK):
            rows = session.execute(select(RetrievalFeatures).where(
                RetrievalFeatures.version == version,
                RetrievalFeatures.content_hash.in_(wanted[start:start + _CHUNK]))).scalars()
            for row in rows:
                found[row.content_hash] = (tuple(row.words.split()), _split(row.shingles), _split(row.locations))
    return found


def live_features(db: Database, full_name: str, version: str = FEATURES_VERSION) -> dict[str, Stored]:
    """slug -> stored features of every live record whose content has them: one query, for a first build."""
    query = (select(Record.slug, RetrievalFeatures.words, RetrievalFeatures.shingles, RetrievalFeatures.locations)
             .join(Repo, Repo.id == Record.repo_id)
             .join(RetrievalFeatures, RetrievalFeatures.content_hash == Record.content_hash)
             .where(Repo.full_name == full_name, Record.state.in_(_LIVE), RetrievalFeatures.version == version))
    with db.session() as session:
        return {slug: (tuple(words.split()), _split(shingles), _split(places))
                for slug, words, shingles, places in session.connection().execute(query)}


def store_features(db: Database, by_hash: dict[str, Features], version: str = FEATURES_VERSION) -> None:
    rows = [RetrievalFeatures(content_hash=content, version=version, words=" ".join(f.words),
                              shingles="\x1f".join(sorted(f.shingles)), locations="\x1f".join(sorted(f.locations)))
            for content, f in by_hash.items() if content and not any("\x1f" in s for s in f.shingles | f.locations)]
    try:
        with db.session() as session:
            session.add_all(rows)
    except IntegrityError:  # another worker stored some of them first: store the rest one by one
        for row in rows:
            try:
                with db.session() as session:
                    session.merge(row)
            except IntegrityError:
                pass


def _split(joined: str) -> frozenset[str]:
    return frozenset(joined.split("\x1f")) if joined else frozenset()
