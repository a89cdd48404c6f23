"""Record persistence for one repository: find by slug or alias, write revisions, remember sync progress."""
from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, cast

from sqlalchemy import CursorResult, Table, insert, inspect, select, update
from sqlalchemy.orm import Session

from bot.adapters.store.models import Record, Repo, Revision, SlugAlias
from bot.core.reports.history import CommitInfo
from bot.core.reports.records import Finding, PerfIssue, Severity

_FACT_COLUMNS = ("title", "track", "backend", "threads", "ratio", "table_ratio", "fix")
# In the lookup caches, a slug whose new record is queued by add_new and not yet inserted.
_QUEUED: Any = object()


@dataclass(frozen=True)
class RevisionInput:
    """Everything one revision row holds, gathered before anything is written."""

    commit: CommitInfo
    path: str
    change: str
    content: str | None
    content_hash: str | None
    record: PerfIssue | None
    findings: tuple[Finding, ...]


class RecordRepository:
    """The records of one watched repository inside one transaction.

    Lookups are cached for the transaction and new rows are flushed in batches, so syncing N reports
    costs a handful of round trips per batch rather than several per report.
    """

    # Bound parameters per IN query, well under SQLite's and PostgreSQL's limits.
    CHUNK = 500
    INSERT_BATCH = 500  # queued new reports per round of inserts

    def __init__(self, session: Session, repo: Repo) -> None:
        self.session = session
        self.repo = repo
        self._current: dict[str, Record | None] = {}
        self._aliases: dict[str, SlugAlias | None] = {}
        self._new: set[int] = set()  # id() of records created in this transaction: they have no stored revisions
        self._written: dict[tuple[int, str], Revision] = {}
        self._queued: list[tuple[str, dict, dict]] = []  # (slug, record row, revision row) awaiting insert_queued

    @classmethod
    def open(cls, session: Session, key: str) -> RecordRepository:
        repo = session.scalar(select(Repo).where(Repo.full_name == key))
        if repo is None:
            repo = Repo(full_name=key)
            session.add(repo)
            session.flush()
        return cls(session, repo)

    @staticmethod
    def hold_mark(session: Session, key: str, expected: str | None) -> bool:
        """Take the repository's row for the rest of the transaction, if its sync mark is still `expected`.

        An UPDATE rather than a read, so two transactions syncing one repository queue on the row (PostgreSQL)
        or the database (SQLite), and the second finds the mark the first moved. A repository not stored yet
        holds no mark.
        """
        repos = cast(Table, Repo.__table__)
        same = repos.c.last_synced_commit.is_(None) if expected is None else repos.c.last_synced_commit == expected
        taken = session.execute(update(repos).where(repos.c.full_name == key, same)
                                .values(last_synced_commit=repos.c.last_synced_commit))
        if cast(CursorResult, taken).rowcount == 1:
            return True
        return expected is None and session.scalar(select(Repo.id).where(Repo.full_name == key)) is None

    @property
    def last_synced_commit(self) -> str | None:
        return self.repo.last_synced_commit

    def mark_synced(self, sha: str) -> None:
        self.insert_queued()
        if self.repo.last_synced_commit != sha:
            self.repo.last_synced_commit = sha
            self.repo.synced_at = datetime.now(UTC)

    def preload(self, slugs: Iterable[str]) -> None:
        """Fetch the records and aliases for many slugs at once (one query per chunk, not per slug)."""
        wanted = sorted({s for s in slugs if s not in self._current or s not in self._aliases})
        for start in range(0, len(wanted), self.CHUNK):
            chunk = wanted[start:start + self.CHUNK]
            for slug in chunk:
                self._current.setdefault(slug, None)
                self._aliases.setdefault(slug, None)
            with self.session.no_autoflush:
                for record in self.session.scalars(select(Record).where(Record.repo_id == self.repo.id,
                                                                        Record.slug.in_(chunk))):
                    self._current[record.slug] = record
                for alias in self.session.scalars(select(SlugAlias).where(SlugAlias.repo_id == self.repo.id,
                                                                          SlugAlias.slug.in_(chunk))):
                    self._aliases[alias.slug] = alias

    def find_current(self, slug: str) -> Record | None:
        """The record whose report file has this slug now (or had it when it was deleted)."""
        if self._current.get(slug) is _QUEUED:
            self.insert_queued()
        if slug not in self._current:
            self.preload([slug])
        return self._current[slug]

    def find(self, slug: str) -> Record | None:
        """The record that holds `slug` now, or held it before a rename."""
        record = self.find_current(slug)
        if record is not None:
            return record
        alias = self._aliases[slug]
        return alias.record if alias is not None else None

    def known_slugs(self, slugs: Iterable[str]) -> frozenset[str]:
        """Which of `slugs` history has seen; asks only about the names given, so cost follows the change."""
        wanted = list(slugs)
        self.preload(wanted)
        return frozenset(s for s in wanted if self._aliases[s] is not None or self._current[s] is not None)

    def never_named(self, slug: str) -> bool:
        """No record holds this slug now and none ever did."""
        return self.find_current(slug) is None and self._aliases[slug] is None

    def add_new(self, slug: str, rev: RevisionInput) -> None:
        """A report under a slug no record ever held: its record, revision and alias rows are queued.

        They are inserted together, one statement per table for the whole batch, when something asks for
        the record or the sync mark moves. A first sync of 10,000 reports spent more time building and
        flushing 30,000 ORM objects than parsing the reports.
        """
        record = dict(repo_id=self.repo.id, slug=slug, state="open", created_at=rev.commit.committed_at,
                      **self._fact_values(rev))
        self._queued.append((slug, record, self._revision_values(rev)))
        self._current[slug] = self._aliases[slug] = _QUEUED
        if len(self._queued) >= self.INSERT_BATCH:  # one statement's worth at a time, not all at the end
            self.insert_queued()

    def insert_queued(self) -> None:
        """Insert every queued new report; their records load from the store when next asked for."""
        if not self._queued:
            return
        queued, self._queued = self._queued, []
        # Core statements on the tables: the ORM's bulk path would rebuild per-row state it never needs here.
        # A declarative model's __table__ is a Table; the ORM types it as any FromClause.
        records, revisions, aliases = (cast(Table, model.__table__) for model in (Record, Revision, SlugAlias))
        # Ids are matched by slug (unique per repository): asking for them in parameter order would make
        # SQLite insert row by row.
        returning = insert(records).returning(records.c.slug, records.c.id)
        ids: dict[str, int] = dict(self.session.execute(returning, [record for _, record, _ in queued]).all())
        self.session.execute(insert(revisions), [dict(revision, record_id=ids[slug]) for slug, _, revision in queued])
        self.session.execute(insert(aliases), [dict(repo_id=self.repo.id, slug=slug, record_id=ids[slug])
                                               for slug, _, _ in queued])
        for slug, _, _ in queued:
            del self._current[slug], self._aliases[slug]

    def create(self, slug: str, path: str) -> Record:
        record = Record(repo=self.repo, slug=slug, path=path, state="open", supersedes=[], errors=0, warnings=0)
        self.session.add(record)
        self._new.add(id(record))
        self._current[slug] = record
        self._alias(slug, record)
        return record

    def rename(self, record: Record, slug: str, path: str) -> None:
        holder = self.find_current(slug)
        if holder is not None and holder is not record:
            # A deleted report's slug is reused by a rename: the old record keeps its history under a tombstone name.
            holder.slug = f"{slug}~{holder.id}"
            self.session.flush()
        self._current[record.slug] = None
        record.slug, record.path = slug, path
        self._current[slug] = record
        self._alias(slug, record)

    def _alias(self, slug: str, record: Record) -> None:
        if self._aliases.get(slug) is _QUEUED:
            self.insert_queued()
        if slug not in self._aliases:
            self.preload([slug])
        alias = self._aliases[slug]
        if alias is None:
            alias = SlugAlias(repo_id=self.repo.id, slug=slug, record=record)
            self.session.add(alias)
            self._aliases[slug] = alias
        elif alias.record is not record:
            alias.record = record

    def ensure_id(self, record: Record) -> int:
        """The record's primary key, flushing it first if it is new."""
        if inspect(record).identity is None:  # pending: its key comes with the flush
            self.session.flush()
        return record.id

    def revision_at(self, record: Record, sha: str) -> Revision | None:
        if id(record) in self._new:
            return None
        with self.session.no_autoflush:
            return self.session.scalar(select(Revision).where(Revision.record_id == record.id,
                                                              Revision.commit_sha == sha))

    def add_revision(self, record: Record, rev: RevisionInput) -> None:
        """Store the revision unless this commit already has one for the record (replays are no-ops)."""
        key = (id(record), rev.commit.sha)
        if key in self._written or self.revision_at(record, rev.commit.sha) is not None:
            return
        self._written[key] = revision = Revision(record=record, **self._revision_values(rev))
        self.session.add(revision)
        if record.created_at is None:
            record.created_at = rev.commit.committed_at

    def mark_merged(self, record: Record, into: Record, commit: CommitInfo) -> None:
        """The merge rule: the report's deletion becomes a merge into `into`, at the commit that did it."""
        self.set_state(record, "merged", merged_into=into)
        existing = self._written.get((id(record), commit.sha)) or self.revision_at(record, commit.sha)
        if existing is None:
            self.add_revision(record, RevisionInput(commit, record.path, "merged", None, None, None, ()))
        elif existing.change == "deleted":
            existing.change = "merged"

    def reads_as(self, record: Record, rev: RevisionInput) -> bool:
        """Whether the record's latest revision stored the facts and findings `rev` reads: a report read again
        under new reading options that change neither gets no revision."""
        latest = self.session.scalars(select(Revision).where(Revision.record_id == record.id)
                                      .order_by(Revision.id.desc()).limit(1)).first()
        stored = json.loads(json.dumps({k: self._revision_values(rev)[k] for k in ("facts", "findings")}))
        return latest is not None and {"facts": latest.facts, "findings": latest.findings} == stored

    def apply_facts(self, record: Record, rev: RevisionInput) -> None:
        """Make the record mirror this revision's facts; only columns that differ are touched."""
        for name, value in self._fact_values(rev).items():
            if getattr(record, name) != value:
                setattr(record, name, value)

    @staticmethod
    def _fact_values(rev: RevisionInput) -> dict:
        """The record columns one revision decides."""
        facts = rev.record.facts() if rev.record else {}
        values = {name: facts.get(name) for name in _FACT_COLUMNS}
        values["title"] = values["title"] or ""
        values["reference"] = rev.record.reference if rev.record else None
        values.update(
            path=rev.path,
            supersedes=list(facts.get("supersedes", [])),
            content_hash=rev.content_hash,
            errors=sum(1 for f in rev.findings if f.is_error),
            warnings=sum(1 for f in rev.findings if f.severity is Severity.WARNING),
            updated_at=rev.commit.committed_at,
        )
        return values

    @staticmethod
    def _revision_values(rev: RevisionInput) -> dict:
        return dict(
            commit_sha=rev.commit.sha,
            author_name=rev.commit.author_name,
            author_email=rev.commit.author_email,
            committed_at=rev.commit.committed_at,
            path=rev.path,
            change=rev.change,
            content_hash=rev.content_hash,
            content=rev.content,
            facts=rev.record.facts() if rev.record else {},
            findings=[f.as_dict() for f in rev.findings],
        )

    def set_state(self, record: Record, state: str, merged_into: Record | None = None) -> None:
        if record.state != state:
            record.state = state
        if record.merged_into is not merged_into:
            record.merged_into = merged_into
