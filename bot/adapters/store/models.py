"""SQLAlchemy tables for repositories, records, their revisions and every slug a record ever had."""
from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, ClassVar

from sqlalchemy import JSON, DateTime, Float, ForeignKey, Integer, String, Text, UniqueConstraint
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column, relationship
from sqlalchemy.types import TypeDecorator


class UTCDateTime(TypeDecorator):
    """Aware UTC datetimes on every backend; SQLite would otherwise hand back naive ones."""

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value, dialect):
        if value is not None and value.tzinfo is None:
            raise ValueError("naive datetime given to the store; pass an aware UTC datetime")
        return value.astimezone(UTC) if value is not None else None

    def process_result_value(self, value, dialect):
        if value is None:
            return None
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


class Base(DeclarativeBase):
    type_annotation_map: ClassVar[dict[Any, Any]] = {datetime: UTCDateTime}


class Repo(Base):
    """A watched repository and how far sync has read it."""

    __tablename__ = "repos"

    id: Mapped[int] = mapped_column(primary_key=True)
    full_name: Mapped[str] = mapped_column(String(400), unique=True)
    last_synced_commit: Mapped[str | None] = mapped_column(String(40))
    synced_at: Mapped[datetime | None] = mapped_column()


class Record(Base):
    """The current state of one report; its facts mirror the latest revision."""

    __tablename__ = "records"
    __table_args__ = (UniqueConstraint("repo_id", "slug"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    repo_id: Mapped[int] = mapped_column(ForeignKey("repos.id"), index=True)
    slug: Mapped[str] = mapped_column(String(200))
    path: Mapped[str] = mapped_column(String(400))
    state: Mapped[str] = mapped_column(String(20), default="open", index=True)
    merged_into_id: Mapped[int | None] = mapped_column(ForeignKey("records.id"))
    title: Mapped[str] = mapped_column(Text, default="")
    track: Mapped[str | None] = mapped_column(String(8))
    backend: Mapped[str | None] = mapped_column(String(8))
    threads: Mapped[int | None] = mapped_column(Integer)
    ratio: Mapped[float | None] = mapped_column(Float)
    table_ratio: Mapped[float | None] = mapped_column(Float)
    reference: Mapped[str | None] = mapped_column(String(200))  # `reference:`: the ratio is head/REF, not language/C
    fix: Mapped[str | None] = mapped_column(String(300))
    supersedes: Mapped[list] = mapped_column(JSON, default=list)
    errors: Mapped[int] = mapped_column(Integer, default=0)
    warnings: Mapped[int] = mapped_column(Integer, default=0)
    content_hash: Mapped[str | None] = mapped_column(String(64))
    created_at: Mapped[datetime | None] = mapped_column()
    updated_at: Mapped[datetime | None] = mapped_column()
    # The latest verification of the record's fix (pass | fail | inconclusive | mismatch | error) and its run.
    verdict: Mapped[str | None] = mapped_column(String(20))
    verdict_run_id: Mapped[int | None] = mapped_column(Integer)
    # What measuring the claim on the default branch found: reproduced | not reproduced | None (not measured).
    reproduced: Mapped[str | None] = mapped_column(String(20))

    merged_into: Mapped[Record | None] = relationship(remote_side=[id])
    repo: Mapped[Repo] = relationship()


class Revision(Base):
    """One change to a report at one commit: who, when, what the file said and what lint found."""

    __tablename__ = "revisions"
    __table_args__ = (UniqueConstraint("record_id", "commit_sha"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    record_id: Mapped[int] = mapped_column(ForeignKey("records.id"), index=True)
    commit_sha: Mapped[str] = mapped_column(String(40))
    author_name: Mapped[str] = mapped_column(String(200), default="")
    author_email: Mapped[str] = mapped_column(String(200), default="")
    committed_at: Mapped[datetime] = mapped_column()
    path: Mapped[str] = mapped_column(String(400))
    change: Mapped[str] = mapped_column(String(12))
    content_hash: Mapped[str | None] = mapped_column(String(64))
    content: Mapped[str | None] = mapped_column(Text)
    facts: Mapped[dict] = mapped_column(JSON, default=dict)
    findings: Mapped[list] = mapped_column(JSON, default=list)

    record: Mapped[Record] = relationship()


class SlugAlias(Base):
    """Every slug a record has held, so renamed and deleted reports stay known to history."""

    __tablename__ = "slug_aliases"
    __table_args__ = (UniqueConstraint("repo_id", "slug"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    repo_id: Mapped[int] = mapped_column(ForeignKey("repos.id"))
    slug: Mapped[str] = mapped_column(String(200))
    record_id: Mapped[int] = mapped_column(ForeignKey("records.id"), index=True)

    record: Mapped[Record] = relationship()
