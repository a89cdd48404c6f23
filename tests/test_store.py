"""The store on SQLite and on a real PostgreSQL server: migrations, records, revisions, aliases."""
from __future__ import annotations

from datetime import datetime, timezone

import pytest
from sqlalchemy import inspect, select

from bot.adapters.store.engine import Database, StoreError
from bot.adapters.store.models import Record, Revision
from bot.adapters.store.queries import RecordFilter, find_records, list_records
from bot.adapters.store.repository import RecordRepository, RevisionInput
from bot.core.reports.history import CommitInfo
from bot.core.reports.parse import parse
from tests.reports import canonical_report

WHEN = datetime(2026, 11, 20, 12, 0, tzinfo=timezone.utc)
COMMIT = CommitInfo("a" * 40, "SEQ agent", "seq@example.invalid", WHEN, "add report")


def _revision(slug: str, commit: CommitInfo = COMMIT, ratio: float = 3.4, change: str = "added") -> RevisionInput:
    path = f"devs/issues/{slug}.md"
    result = parse(path, canonical_report(slug, ratio=ratio).encode())
    return RevisionInput(commit, path, change, "text", result.record.content_hash, result.record, result.findings)


def test_migrations_create_every_table_and_are_idempotent(db_url):
    db = Database(db_url)
    Database(db_url).dispose()  # a second open runs the migrations again: nothing to do, no error
    tables = set(inspect(db.engine).get_table_names())
    assert {"repos", "records", "revisions", "slug_aliases", "alembic_version"} <= tables
    db.dispose()


def test_record_mirrors_its_latest_revision_and_keeps_aware_dates(database):
    with database.session() as session:
        repo = RecordRepository.open(session, "team/runtime")
        record = repo.create("perf_deep_match", "devs/issues/perf_deep_match.md")
        rev = _revision("perf_deep_match")
        repo.add_revision(record, rev)
        repo.apply_facts(record, rev)
    with database.session() as session:
        record = session.scalar(select(Record))
        assert (record.slug, record.track, record.backend, record.ratio, record.state) == (
            "perf_deep_match", "seq", "c", 3.4, "open")
        assert record.created_at == WHEN and record.created_at.tzinfo is not None
        assert session.scalar(select(Revision.author_name)) == "SEQ agent"


def test_a_revision_is_stored_once_per_record_and_commit(database):
    with database.session() as session:
        repo = RecordRepository.open(session, "team/runtime")
        record = repo.create("perf_a", "devs/issues/perf_a.md")
        repo.add_revision(record, _revision("perf_a"))
        repo.add_revision(record, _revision("perf_a", change="modified"))
    with database.session() as session:
        assert len(session.scalars(select(Revision)).all()) == 1


def test_a_failed_transaction_writes_nothing(database):
    with pytest.raises(RuntimeError):
        with database.session() as session:
            RecordRepository.open(session, "team/runtime").create("perf_a", "devs/issues/perf_a.md")
            raise RuntimeError("crash mid-sync")
    with database.session() as session:
        assert session.scalars(select(Record)).all() == []


def test_renamed_records_answer_to_every_name_they_had(database):
    with database.session() as session:
        repo = RecordRepository.open(session, "team/runtime")
        record = repo.create("perf_old", "devs/issues/perf_old.md")
        repo.rename(record, "perf_new", "devs/issues/perf_new.md")
        assert repo.known_slugs(["perf_old", "perf_new", "perf_never"]) == {"perf_old", "perf_new"}
    with database.session() as session:
        assert [r.slug for r, _ in find_records(session, "perf_old")] == ["perf_new"]


def test_list_filters_and_sorts_by_ratio(database):
    with database.session() as session:
        repo = RecordRepository.open(session, "team/runtime")
        for slug, ratio in (("perf_small", 2.5), ("perf_big", 9.0), ("perf_mid", 4.0)):
            record = repo.create(slug, f"devs/issues/{slug}.md")
            rev = _revision(slug, ratio=ratio)
            repo.add_revision(record, rev)
            repo.apply_facts(record, rev)
    with database.session() as session:
        rows = list_records(session, RecordFilter())
        assert [r["slug"] for r in rows] == ["perf_big", "perf_mid", "perf_small"]
        assert [r["slug"] for r in list_records(session, RecordFilter(min_ratio=3.0, sort="slug"))] == ["perf_big", "perf_mid"]
        assert list_records(session, RecordFilter(states=("merged",))) == []


def test_a_bad_url_is_a_clear_error():
    with pytest.raises(StoreError, match="not a database URL"):
        Database("not a url")


@pytest.mark.postgres
def test_an_unreachable_server_is_a_clear_error_without_the_password(postgres_server):
    url = f"postgresql+psycopg://perfbot:s3cret@127.0.0.1:{postgres_server.port + 1}/nothing"
    with pytest.raises(StoreError) as info:
        Database(url)
    assert "s3cret" not in str(info.value) and "cannot open the store" in str(info.value)


def test_the_migrations_build_exactly_the_schema_the_models_describe(database):
    from alembic.autogenerate import compare_metadata
    from alembic.migration import MigrationContext

    from bot.adapters.store import service_models  # noqa: F401  (registers the service tables)
    from bot.adapters.store.models import Base

    with database.engine.connect() as connection:
        diff = compare_metadata(MigrationContext.configure(connection), Base.metadata)
    assert diff == []


def test_migration_0013_gives_stored_reference_reports_their_reference(tmp_path):
    from sqlalchemy import create_engine, text

    from bot.adapters.store.engine import migrate

    url = f"sqlite:///{tmp_path / 'old.sqlite3'}"
    engine = create_engine(url)
    migrate(engine, "0012")
    now = datetime(2026, 5, 1, tzinfo=timezone.utc)
    with engine.begin() as c:
        c.execute(text("INSERT INTO repos (id, key) VALUES (1, 'team/runtime')"))
        for n, (slug, front) in enumerate((("perf_ref", "reference: runtime@v1\n"), ("perf_c", "")), start=1):
            c.execute(text("INSERT INTO records (id, repo_id, slug, path, state, title, supersedes, errors, warnings) "
                           "VALUES (:id, 1, :slug, 'p', 'open', '', '[]', 0, 0)"), {"id": n, "slug": slug})
            content = f"---\ntrack: seq\n{front}ratio: 1.4\n---\n# t\n\nreference: not-front-matter\n"
            c.execute(text("INSERT INTO revisions (record_id, commit_sha, author_name, author_email, committed_at, "
                           "path, change, content, facts, findings) VALUES (:id, 'abc', '', '', :at, 'p', 'added', "
                           ":content, '{}', '[]')"), {"id": n, "at": now, "content": content})
    engine.dispose()
    database = Database(url)  # opening migrates to head
    with database.session() as session:
        rows = {r.slug: (r.reference, list_records(session, RecordFilter(("open",)))) for r in session.scalars(select(Record))}
    database.dispose()
    assert {slug: reference for slug, (reference, _) in rows.items()} == {"perf_ref": "runtime@v1", "perf_c": None}
    listed = {r["slug"]: r["ratio_kind"] for r in rows["perf_ref"][1]}
    assert listed == {"perf_ref": "head/v1", "perf_c": "language/C"}
