"""Tables of the running service: webhook deliveries, app installations, the GitHub mirror, record events."""
from __future__ import annotations

from datetime import datetime

from sqlalchemy import JSON, BigInteger, Boolean, ForeignKey, Integer, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from bot.adapters.store.models import Base


class Delivery(Base):
    """One webhook POST (or local push), stored before it is acknowledged and processed under a lease."""

    __tablename__ = "deliveries"

    id: Mapped[str] = mapped_column(String(100), primary_key=True)
    event: Mapped[str] = mapped_column(String(60))
    action: Mapped[str | None] = mapped_column(String(60))
    repo: Mapped[str | None] = mapped_column(String(400))
    installation_id: Mapped[int | None] = mapped_column(BigInteger)
    payload: Mapped[str] = mapped_column(Text)
    received_at: Mapped[datetime] = mapped_column()
    status: Mapped[str] = mapped_column(String(12), index=True)
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    next_attempt_at: Mapped[datetime] = mapped_column(index=True)
    lease_owner: Mapped[str | None] = mapped_column(String(100))
    lease_expires_at: Mapped[datetime | None] = mapped_column()
    last_error: Mapped[str | None] = mapped_column(Text)
    finished_at: Mapped[datetime | None] = mapped_column()


class Installation(Base):
    """A GitHub App installation perfbot has heard of, and the repositories it covers."""

    __tablename__ = "installations"

    id: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=False)
    account: Mapped[str] = mapped_column(String(200))
    repos: Mapped[list] = mapped_column(JSON, default=list)
    active: Mapped[bool] = mapped_column(Boolean, default=True)
    updated_at: Mapped[datetime] = mapped_column()


class IssueMirror(Base):
    """What perfbot last wrote to a record's GitHub issue, so unchanged records cost no write."""

    __tablename__ = "issue_mirrors"

    record_id: Mapped[int] = mapped_column(ForeignKey("records.id"), primary_key=True, autoincrement=False)
    number: Mapped[int] = mapped_column(Integer)
    content_hash: Mapped[str] = mapped_column(String(64), default="")
    lint_comment_id: Mapped[int | None] = mapped_column(BigInteger)
    lint_hash: Mapped[str] = mapped_column(String(64), default="")
    duplicate_comment_id: Mapped[int | None] = mapped_column(BigInteger)
    synced_at: Mapped[datetime | None] = mapped_column()


class RecordEvent(Base):
    """Something a person did to a record outside git: a close without a verdict, a reopen, an edit."""

    __tablename__ = "record_events"

    id: Mapped[int] = mapped_column(primary_key=True)
    record_id: Mapped[int] = mapped_column(ForeignKey("records.id"), index=True)
    kind: Mapped[str] = mapped_column(String(30))
    actor: Mapped[str] = mapped_column(String(200), default="")
    detail: Mapped[str] = mapped_column(Text, default="")
    delivery_id: Mapped[str | None] = mapped_column(String(100))
    at: Mapped[datetime] = mapped_column()
