"""The store on SQLite and on a real PostgreSQL server: migrations, records, revisions, aliases."""
from __future__ import annotations

from datetime import UTC, datetime

import pytest
from sqlalchemy import inspect, select

from bot.adapters.store.engine import Database, StoreError
from bot.adapters.store.models import Record, Revision
from bot.adapters.store.queries import RecordFilter, find_records, list_records
from bot.adapters.store.repository import RecordRepository, RevisionInput
from bot.adapters.store.service_models import LlmAnswer
from bot.core.reports.history import CommitInfo
from bot.core.reports.parse import parse
from tests.reports import canonical_report

WHEN = datetime(2026, 11, 20, 12, 0, tzinfo=UTC)
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
    with pytest.raises(RuntimeError), database.session() as session:
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
        assert [r["slug"] for r in list_records(session, RecordFilter(min_ratio=3.0, sort="slug"))] == ["perf_big",
                                                                                                        "perf_mid"]
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
    now = datetime(2026, 5, 1, tzinfo=UTC)
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
        rows = {r.slug: (r.reference, list_records(session,
                                                   RecordFilter(("open",)))) for r in session.scalars(select(Record))}
    database.dispose()
    assert {slug: reference for slug, (reference, _) in rows.items()} == {"perf_ref": "runtime@v1", "perf_c": None}
    listed = {r["slug"]: r["ratio_kind"] for r in rows["perf_ref"][1]}
    assert listed == {"perf_ref": "head/v1", "perf_c": "language/C"}


def test_one_llm_answer_cache_keys_each_question_by_kind_content_partner_model_and_prompt(database):
    from bot.adapters.store.reviews.llm_cache import LlmAnswerCache, token_totals

    dedup, audit = LlmAnswerCache(database, "dedup"), LlmAnswerCache(database, "audit")
    assert dedup.put("n", "m", "1", {"verdict": "distinct"}, {"input_tokens": 2}, partner_hash="o", slug="perf_n")
    assert not dedup.put("n", "m", "1", {"verdict": "duplicate"}, {"input_tokens": 9}, partner_hash="o")
    assert audit.put("n", "m", "1", {"findings": []}, None)  # the same content, another question
    assert dedup.get("n", "m", "1", partner_hash="o").answer == {"verdict": "distinct"}  # the first answer stands
    assert dedup.get("o", "m", "1", partner_hash="n") is None and dedup.get("n", "m", "2", partner_hash="o") is None
    assert dedup.get("n", "m", "1") is None and audit.get("n", "m", "1").answer == {"findings": []}
    assert token_totals(database) == {"dedup": {"input_tokens": 2}, "audit": {}}
    with database.session() as session:  # inside a caller's transaction, a repeated question leaves it usable
        assert not audit.put("n", "m", "1", {"findings": [1]}, None, session=session)
        assert audit.put("h", "m", "1", {"findings": [2]}, None, session=session)
    assert audit.get("h", "m", "1").answer == {"findings": [2]}
    with pytest.raises(ValueError, match="unknown kind"):
        LlmAnswerCache(database, "verdicts")


def test_cached_verdicts_are_read_back_by_their_verdict_in_the_query(database):
    from bot.adapters.store.reviews.dedup_store import VerdictCache, pair_verdicts
    from bot.core.dedup.verdicts import Verdict

    cache = VerdictCache(database)
    for n, kind in enumerate(("duplicate", "distinct", "overlaps")):
        merged = None if kind == "distinct" else "# merged"
        cache.put(f"n{n}", "o", f"perf_{n}", "perf_o", Verdict(kind, 0.5, ("why",), merged, "offline", "1"))
    with database.session() as session:
        overlapping = pair_verdicts(session, kinds=("duplicate", "overlaps"))
        newest = pair_verdicts(session, LlmAnswer.partner_slug == "perf_o", newest_first=True, limit=2)
    assert [(p.new_hash, p.verdict.kind, p.verdict.reasons) for p in overlapping] == [
        ("n0", "duplicate", ("why",)), ("n2", "overlaps", ("why",))]
    assert [p.new_slug for p in newest] == ["perf_2", "perf_1"]


def test_migration_0015_moves_the_three_llm_caches_into_one_table_and_back(db_url):
    from sqlalchemy import MetaData

    from bot.adapters.store.engine import make_engine, migrate
    from bot.adapters.store.reviews.dedup_store import VerdictCache, audited, pair_verdicts
    from bot.adapters.store.reviews.llm_cache import LlmAnswerCache, token_totals
    from bot.core.dedup.verdicts import Verdict

    engine = make_engine(db_url)
    migrate(engine, "0014")
    old = {
        "dedup_verdicts": [dict(new_hash="n", old_hash="o", reviewer="agent:m", prompt_version="3", new_slug="perf_n",
                                old_slug="perf_o", kind="duplicate", confidence=0.9, reasons=["same cause"],
                                merged_report="# merged", merge_problems=["no title"], usage={"input_tokens": 7},
                                created_at=WHEN)],
        "report_audits": [dict(content_hash="n", reviewer="agent:m", prompt_version="3",
                               findings=[{"rule": "audit-x"}], not_checked=["gpu"], usage={"input_tokens": 5},
                               created_at=WHEN)],
        "fact_answers": [dict(content_hash="n", model="m", prompt_version="f1", slug="perf_n", asked=["ratio"],
                              answer={"ratio": 4.0}, problem="", usage={"output_tokens": 3}, created_at=WHEN),
                         dict(content_hash="o", model="m", prompt_version="f1", slug="perf_o", asked=["threads"],
                              answer=None, problem="no answer fit", usage={}, created_at=WHEN)],
    }

    def tables():
        meta = MetaData()
        meta.reflect(engine)
        return meta.tables

    with engine.begin() as connection:
        for name, rows in old.items():
            connection.execute(tables()[name].insert(), rows)
    engine.dispose()

    database = Database(db_url)  # opening migrates to head
    assert {"dedup_verdicts", "report_audits", "fact_answers"}.isdisjoint(tables()) and "llm_answers" in tables()
    assert VerdictCache(database).get("n", "o", "agent:m", "3") == Verdict(
        "duplicate", 0.9, ("same cause",), "# merged", "agent:m", "3", merge_problems=("no title",))
    facts = LlmAnswerCache(database, "facts")
    assert facts.get("n", "m", "f1").answer == {"asked": ["ratio"], "answer": {"ratio": 4.0}, "problem": ""}
    assert (facts.get("o", "m", "f1").slug, facts.get("o", "m", "f1").answer["problem"]) == ("perf_o", "no answer fit")
    assert audited(database, "n", "agent:m", "3") and not audited(database, "o", "agent:m", "3")
    assert token_totals(database) == {"dedup": {"input_tokens": 7}, "audit": {"input_tokens": 5},
                                      "facts": {"output_tokens": 3}}
    with database.session() as session:
        assert [(p.new_slug, p.old_slug, p.at) for p in pair_verdicts(session)] == [("perf_n", "perf_o", WHEN)]
    database.dispose()

    downgrade(engine, "0014")
    with engine.connect() as connection:
        back = {name: [{k: v for k, v in row._mapping.items() if k != "id"}
                       for row in connection.execute(tables()[name].select().order_by(tables()[name].c.id))]
                for name in old}
    assert "llm_answers" not in tables()
    engine.dispose()
    for rows in back.values():
        for row in rows:  # SQLite hands datetimes back naive
            row["created_at"] = row["created_at"].replace(tzinfo=row["created_at"].tzinfo or UTC)
    assert back == old


def test_migration_0016_names_the_repository_full_name_in_every_table_and_back(db_url):
    from sqlalchemy import MetaData, inspect
    from sqlalchemy.exc import IntegrityError

    from bot.adapters.store.bench import fix_store
    from bot.adapters.store.engine import make_engine, migrate

    engine = make_engine(db_url)
    migrate(engine, "0015")
    meta = MetaData()
    meta.reflect(engine)
    with engine.begin() as connection:
        connection.execute(meta.tables["fixes"].insert(), [dict(
            repo_key="acme/runtime", slug="perf_x", branch="fix/perf_x", source="branch", state="open",
            head_sha="a" * 40, additions=2, deletions=3, changed_files=1, attached_by="", created_at=WHEN,
            updated_at=WHEN)])
    engine.dispose()

    database = Database(db_url)  # opening migrates to head
    [fix] = fix_store.fixes_for(database, "acme/runtime", "perf_x")
    assert (fix.branch, fix.head_sha) == ("fix/perf_x", "a" * 40)
    columns = {table: {c["name"] for c in inspect(database.engine).get_columns(table)}
               for table in ("fixes", "notices", "repos")}
    assert all("full_name" in names and not {"repo_key", "key"} & names for names in columns.values())
    assert {i["name"] for i in inspect(database.engine).get_indexes("fixes")} >= {"ix_fixes_full_name"}
    with database.engine.begin() as connection, pytest.raises(IntegrityError):  # the unique key moved with it
        connection.exec_driver_sql(
            "INSERT INTO fixes (full_name, slug, branch, source, state, additions, deletions, changed_files, "
            "attached_by, created_at, updated_at) SELECT full_name, slug, branch, source, state, 0, 0, 0, '', "
            "created_at, updated_at FROM fixes")
    database.dispose()

    downgrade(engine, "0015")
    with engine.connect() as connection:
        assert connection.exec_driver_sql("SELECT repo_key, slug FROM fixes").all() == [("acme/runtime", "perf_x")]
    engine.dispose()


def downgrade(engine, revision: str) -> None:
    """Alembic's downgrade on the engine's own connection, as `migrate` runs the upgrades."""
    from alembic import command
    from alembic.config import Config

    from bot.adapters.store.engine import MIGRATIONS

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    with engine.begin() as connection:
        config.attributes["connection"] = connection
        command.downgrade(config, revision)


def test_migration_0017_adds_a_lease_generation_and_the_readiness_probe_row_and_back(db_url):
    from sqlalchemy import MetaData, inspect

    from bot.adapters.store.engine import make_engine, migrate

    engine = make_engine(db_url)
    migrate(engine, "0016")
    meta = MetaData()
    meta.reflect(engine)
    with engine.begin() as connection:  # a delivery running when the store was upgraded
        connection.execute(meta.tables["deliveries"].insert(), [dict(
            id="d-1", event="push", payload="{}", received_at=WHEN, status="running", attempts=1,
            next_attempt_at=WHEN, lease_owner="old-worker", lease_expires_at=WHEN)])
    migrate(engine, "head")
    with engine.connect() as connection:
        assert connection.exec_driver_sql("SELECT lease_generation FROM deliveries").scalars().all() == [0]
        assert connection.exec_driver_sql("SELECT name FROM probes").scalars().all() == ["readyz"]
    downgrade(engine, "0016")
    assert "probes" not in inspect(engine).get_table_names()
    assert "lease_generation" not in {c["name"] for c in inspect(engine).get_columns("deliveries")}
    engine.dispose()
