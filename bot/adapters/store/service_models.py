"""Tables of the running service: webhook deliveries, app installations, the GitHub mirror, record events."""
from __future__ import annotations

from datetime import datetime

from sqlalchemy import JSON, BigInteger, Boolean, ForeignKey, Integer, String, Text, UniqueConstraint
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
    # Bumped by every claim: a write is fenced by (owner, generation), so a worker whose lease was taken over
    # cannot settle, or write its bench run's progress, after another claimed the delivery again.
    lease_generation: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    last_error: Mapped[str | None] = mapped_column(Text)
    finished_at: Mapped[datetime | None] = mapped_column()


class Probe(Base):
    """A row /readyz writes and commits, so a store that cannot take a write (a full disk) says not ready."""

    __tablename__ = "probes"

    name: Mapped[str] = mapped_column(String(100), primary_key=True)
    at: Mapped[datetime | None] = mapped_column()


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


class LlmAnswer(Base):
    """A reviewer's answer to one question about report contents, kept so the same question never costs twice.

    `kind` names the question: "dedup" (a pair: the new content against the older `partner_hash`), "audit" or
    "facts" (one content; no partner). `answer` is the kind's own JSON, written and read by its wrapper.
    """

    __tablename__ = "llm_answers"
    __table_args__ = (UniqueConstraint("kind", "content_hash", "partner_hash", "model", "prompt_version"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    kind: Mapped[str] = mapped_column(String(12))
    content_hash: Mapped[str] = mapped_column(String(64))
    partner_hash: Mapped[str] = mapped_column(String(64), default="")
    model: Mapped[str] = mapped_column(String(100))  # the reviewer ("offline", "agent:<model>") or the model asked
    prompt_version: Mapped[str] = mapped_column(String(40))
    slug: Mapped[str] = mapped_column(String(200), default="")  # the report's name when asked, for pages
    partner_slug: Mapped[str] = mapped_column(String(200), default="")
    answer: Mapped[dict] = mapped_column(JSON)
    usage: Mapped[dict] = mapped_column(JSON, default=dict)
    created_at: Mapped[datetime] = mapped_column()


class PairOverride(Base):
    """A person's word on a pair ("not a duplicate"), which every later review respects."""

    __tablename__ = "pair_overrides"
    __table_args__ = (UniqueConstraint("full_name", "slug_a", "slug_b"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    full_name: Mapped[str] = mapped_column(String(400))
    slug_a: Mapped[str] = mapped_column(String(200))
    slug_b: Mapped[str] = mapped_column(String(200))
    kind: Mapped[str] = mapped_column(String(20))
    actor: Mapped[str] = mapped_column(String(200), default="")
    at: Mapped[datetime] = mapped_column()


class BenchRun(Base):
    """One verification: what was measured where, every sample, and the verdict, kept with the record."""

    __tablename__ = "bench_runs"

    id: Mapped[int] = mapped_column(primary_key=True)
    full_name: Mapped[str] = mapped_column(String(400), index=True)
    slug: Mapped[str] = mapped_column(String(200), index=True)
    runner: Mapped[str] = mapped_column(String(100))
    base_sha: Mapped[str | None] = mapped_column(String(40))
    head_sha: Mapped[str] = mapped_column(String(40))
    verdict: Mapped[str] = mapped_column(String(20))
    message: Mapped[str] = mapped_column(Text, default="")
    result: Mapped[dict] = mapped_column(JSON, default=dict)
    created_at: Mapped[datetime] = mapped_column()
    # A queued run waits for a worker; `progress` is what its comment and the dashboard show meanwhile.
    status: Mapped[str] = mapped_column(String(12), default="done", index=True)  # queued | running | done
    purpose: Mapped[str] = mapped_column(String(12), default="fix")  # fix (base vs head) | reproduce (base alone)
    pr_number: Mapped[int | None] = mapped_column(Integer)
    requested_by: Mapped[str] = mapped_column(String(200), default="")
    host: Mapped[str] = mapped_column(String(200), default="")
    progress: Mapped[dict] = mapped_column(JSON, default=dict)
    started_at: Mapped[datetime | None] = mapped_column()
    finished_at: Mapped[datetime | None] = mapped_column()
    # Asked for by a command: runner=NAME, samples=N, and the answer comment to keep current.
    options: Mapped[dict] = mapped_column(JSON, default=dict)
    cancel_requested: Mapped[bool] = mapped_column(Boolean, default=False)


class Fix(Base):
    """A branch (usually behind a PR) that claims to fix a record: where it came from and what it changes."""

    __tablename__ = "fixes"
    __table_args__ = (UniqueConstraint("full_name", "slug", "branch"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    full_name: Mapped[str] = mapped_column(String(400), index=True)
    slug: Mapped[str] = mapped_column(String(200), index=True)
    branch: Mapped[str] = mapped_column(String(255))
    source: Mapped[str] = mapped_column(String(12))  # report | pr-body | branch | command
    state: Mapped[str] = mapped_column(String(12), default="open")  # open | merged | closed | detached
    head_sha: Mapped[str | None] = mapped_column(String(40))
    base_sha: Mapped[str | None] = mapped_column(String(40))
    pr_number: Mapped[int | None] = mapped_column(Integer)
    additions: Mapped[int] = mapped_column(Integer, default=0)
    deletions: Mapped[int] = mapped_column(Integer, default=0)
    changed_files: Mapped[int] = mapped_column(Integer, default=0)
    token_delta: Mapped[int | None] = mapped_column(Integer)
    attached_by: Mapped[str] = mapped_column(String(200), default="")
    created_at: Mapped[datetime] = mapped_column()
    updated_at: Mapped[datetime] = mapped_column()


class CommandAnswer(Base):
    """perfbot's one answer to one comment with commands: a line per command, edited as work goes on."""

    __tablename__ = "command_answers"
    __table_args__ = (UniqueConstraint("full_name", "source_comment_id"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    full_name: Mapped[str] = mapped_column(String(400))
    issue_number: Mapped[int] = mapped_column(Integer)
    source_comment_id: Mapped[int] = mapped_column(BigInteger)
    answer_comment_id: Mapped[int | None] = mapped_column(BigInteger)
    author: Mapped[str] = mapped_column(String(200), default="")
    lines: Mapped[list] = mapped_column(JSON, default=list)  # [{"command", "line", "answer", "runs"}]
    created_at: Mapped[datetime] = mapped_column()
    updated_at: Mapped[datetime] = mapped_column()


class DigestPost(Base):
    """A digest as posted: one per repository and week, so a restart neither skips nor repeats one."""

    __tablename__ = "digests"
    __table_args__ = (UniqueConstraint("full_name", "week"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    full_name: Mapped[str] = mapped_column(String(400))
    week: Mapped[str] = mapped_column(String(10))  # ISO year-week of the window's end, e.g. 2026-W49
    window_start: Mapped[datetime] = mapped_column()
    window_end: Mapped[datetime] = mapped_column()
    body: Mapped[str] = mapped_column(Text)
    summary: Mapped[dict] = mapped_column(JSON, default=dict)  # the digest's numbers, for the dashboard
    issue_number: Mapped[int | None] = mapped_column(Integer)
    created_at: Mapped[datetime] = mapped_column()


class DashboardIssue(Base):
    """The campaign dashboard issue of a repository and the hash of the body last written to it."""

    __tablename__ = "dashboard_issues"

    full_name: Mapped[str] = mapped_column(String(400), primary_key=True)
    number: Mapped[int] = mapped_column(Integer)
    content_hash: Mapped[str] = mapped_column(String(64), default="")
    updated_at: Mapped[datetime] = mapped_column()


class Notice(Base):
    """A milestone, a verified fix or a blocker told once: the row is claimed before the comment is posted."""

    __tablename__ = "notices"
    __table_args__ = (UniqueConstraint("full_name", "kind", "subject"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    full_name: Mapped[str] = mapped_column(String(400))
    kind: Mapped[str] = mapped_column(String(40))
    subject: Mapped[str] = mapped_column(String(300))
    text: Mapped[str] = mapped_column(Text, default="")
    created_at: Mapped[datetime] = mapped_column()
    comment_id: Mapped[int | None] = mapped_column(BigInteger)  # None: claimed, not posted yet
    webhook_queued: Mapped[bool] = mapped_column(Boolean, default=False)
    resolved_at: Mapped[datetime | None] = mapped_column()


class RetrievalFeatures(Base):
    """What retrieval compares of one report content (core/dedup/similarity.py), so a new process does not parse
    and lex every live report again to build its index. Keyed by content and by the features' version."""

    __tablename__ = "retrieval_features"

    content_hash: Mapped[str] = mapped_column(String(64), primary_key=True)
    version: Mapped[str] = mapped_column(String(20), primary_key=True)
    words: Mapped[str] = mapped_column(Text)  # joined by spaces
    shingles: Mapped[str] = mapped_column(Text)  # joined by \x1f: a shingle holds spaces
    locations: Mapped[str] = mapped_column(Text)  # joined by \x1f


class Bisection(Base):
    """A search for the commit that brought a fixed report's claim back: each measured step kept as it is decided,
    so a bisection that a crash interrupted goes on from its last step."""

    __tablename__ = "bisections"

    id: Mapped[int] = mapped_column(primary_key=True)
    full_name: Mapped[str] = mapped_column(String(400), index=True)
    slug: Mapped[str] = mapped_column(String(200))
    good_sha: Mapped[str] = mapped_column(String(40))
    bad_sha: Mapped[str] = mapped_column(String(40))
    status: Mapped[str] = mapped_column(String(12), default="queued")  # queued | running | done
    outcome: Mapped[str] = mapped_column(String(20), default="")  # found | unresolved | error
    culprit_sha: Mapped[str | None] = mapped_column(String(40))
    message: Mapped[str] = mapped_column(Text, default="")
    steps: Mapped[list] = mapped_column(JSON, default=list)  # {sha, mark, attempt, verdict, interval, ...}
    requested_by: Mapped[str] = mapped_column(String(200), default="")
    options: Mapped[dict] = mapped_column(JSON, default=dict)  # the answer line a command keeps current
    created_at: Mapped[datetime] = mapped_column()
    finished_at: Mapped[datetime | None] = mapped_column()


class PendingMerge(Base):
    """An open merge PR (dedup's or `/perf merge`'s), kept from its opening to its closing so the dashboard can show
    it without asking GitHub; the campaign dashboard's refresh sets the list right against GitHub's own."""

    __tablename__ = "pending_merges"
    __table_args__ = (UniqueConstraint("full_name", "number"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    full_name: Mapped[str] = mapped_column(String(400), index=True)
    number: Mapped[int] = mapped_column(Integer)
    keep: Mapped[str] = mapped_column(String(200))  # the report that survives (the branch is named after it)
    # the report merged into `keep`; "" when only GitHub's list named the PR
    merged_from: Mapped[str] = mapped_column(String(200), default="")
    title: Mapped[str] = mapped_column(String(400), default="")
    opened_by: Mapped[str] = mapped_column(String(200), default="")  # a reviewer's name, or the person who asked
    opened_at: Mapped[datetime] = mapped_column()
