"""Opening a store: engine from a URL, schema brought to head by Alembic, sessions handed out."""
from __future__ import annotations

import fcntl
import hashlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

from sqlalchemy import QueuePool, create_engine, event, text
from sqlalchemy.engine import Connection, Engine, make_url
from sqlalchemy.exc import InterfaceError, NoSuchModuleError, OperationalError
from sqlalchemy.exc import TimeoutError as PoolTimeout
from sqlalchemy.orm import Session, sessionmaker

MIGRATIONS = Path(__file__).with_name("migrations")
SQLITE_BUSY_SECONDS = 30  # how long a connection waits for another's write lock before "database is locked"
POOL_TIMEOUT_SECONDS = 10  # how long a thread waits for a pooled connection before sqlalchemy's TimeoutError
# One key for every perfbot store on a server: processes started together migrate one after another.
MIGRATION_LOCK_KEY = int.from_bytes(hashlib.sha256(b"perfbot migrations").digest()[:8], "big", signed=True)

T = TypeVar("T")


# The store is busy or away for a moment (a pool with no free connection, a restart or fail-over that cut the
# connection, SQLite's lock held past its wait): the work that met it is tried again, not failed.
STORE_BUSY = (PoolTimeout,)  # this process's own congestion: not the delivery's attempt
STORE_AWAY = (OperationalError, InterfaceError)  # counted as an attempt, so a real fault still ends


class StoreError(Exception):
    """The store cannot be opened or used; the message says what to do."""


def _sqlite_pragmas(dbapi_connection, _record) -> None:
    # WAL lets the CLI read while a sync writes; foreign keys are off by default in SQLite. Under WAL, NORMAL
    # survives a killed process but may lose the last commits to a power cut (`Database.bounded` says FULL).
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.close()


def pool_size_for(threads: int) -> int:
    """Connections a process may hold at once: each worker thread holds one at a time (none while it waits for a
    repository lock) and a repository lock it holds one more; the heartbeat, the scheduler and the web threads
    or health probes share the rest."""
    return 2 * threads + 4


def make_engine(url: str, pool_size: int = 5) -> Engine:
    """An engine for the URL, PostgreSQL's driver chosen when the URL names none. `pool_size`: connections kept
    (as many again may be opened past it); sized from the threads that use them (`pool_size_for`)."""
    try:
        parsed = make_url(url)
    except Exception as exc:  # sqlalchemy raises ArgumentError with the bad URL inside
        raise StoreError(f"not a database URL: {url!r} ({exc}); "
                         "use sqlite:///PATH or postgresql+psycopg://...") from None
    if parsed.drivername == "postgresql":
        parsed = parsed.set(drivername="postgresql+psycopg")
    if parsed.drivername.startswith("sqlite"):
        if parsed.database and parsed.database != ":memory:":
            Path(parsed.database).parent.mkdir(parents=True, exist_ok=True)
        engine = create_engine(parsed, connect_args={"timeout": SQLITE_BUSY_SECONDS}, pool_size=pool_size,
                               max_overflow=pool_size, pool_timeout=POOL_TIMEOUT_SECONDS) \
            if parsed.database and parsed.database != ":memory:" else \
            create_engine(parsed, connect_args={"timeout": SQLITE_BUSY_SECONDS})
        event.listen(engine, "connect", _sqlite_pragmas)
        return engine
    try:
        return create_engine(parsed, pool_pre_ping=True, pool_size=pool_size, max_overflow=pool_size,
                             pool_timeout=POOL_TIMEOUT_SECONDS)
    except (ModuleNotFoundError, NoSuchModuleError) as exc:
        raise StoreError(f"no database driver for {parsed.drivername!r} ({exc}); perfbot supports sqlite:/// and "
                         "postgresql+psycopg:// (pip install 'perfbot[postgres]')") from None


def migrate(engine: Engine, revision: str = "head") -> None:
    """Bring the schema to `revision`; safe to run on every start since Alembic skips applied steps."""
    # Imported on first use: `perfbot lint` loads this module but opens no store when none exists.
    from alembic import command
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    with _sqlite_migration_lock(engine), engine.begin() as connection:
        if connection.dialect.name == "postgresql":
            # Held to this transaction's end: processes started together on an empty database migrate one at a
            # time, and each one after the first finds the schema at head (without it, two CREATE TABLEs race).
            connection.exec_driver_sql(f"SELECT pg_advisory_xact_lock({MIGRATION_LOCK_KEY})")
        config.attributes["connection"] = connection
        command.upgrade(config, revision)


@contextmanager
def _sqlite_migration_lock(engine: Engine) -> Iterator[None]:
    """SQLite's own lock is taken per statement, not around Alembic's read-then-create: a file lock beside the
    database holds the whole migration (a database in memory has one process)."""
    database = engine.url.database
    if engine.dialect.name != "sqlite" or not database or database == ":memory:":
        yield
        return
    with open(f"{database}.migrate-lock", "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


class Database:
    """An open store: one engine, a session factory, the schema at head."""

    def __init__(self, url: str, *, run_migrations: bool = True, pool_size: int = 5) -> None:
        self.url = url
        self.engine = make_engine(url, pool_size)
        self._pool_limit = 2 * pool_size  # pool_size kept and as many again past it (make_engine)
        if run_migrations:
            try:
                migrate(self.engine)
            except StoreError:
                raise
            except Exception as exc:
                raise StoreError(f"cannot open the store at {self.safe_url}: {exc.__class__.__name__}: {exc}") from exc
        self._sessions = sessionmaker(self.engine, expire_on_commit=False)

    @property
    def safe_url(self) -> str:
        """The URL with any password hidden, fit for messages and logs."""
        return make_url(self.url).render_as_string(hide_password=True)

    @contextmanager
    def session(self) -> Iterator[Session]:
        """A transaction: committed when the block ends, rolled back whole on any error."""
        with self._sessions() as session, session.begin():
            yield session

    def row(self, model: type[Any], key: object, convert: Callable[[Any], T]) -> T | None:
        """The row of `model` with primary key `key`, converted inside its session (so no lazy load outlives it);
        None when there is none."""
        with self.session() as session:
            found = session.get(model, key)
            return convert(found) if found is not None else None

    def stored_row(self, model: type[Any], key: object, convert: Callable[[Any], T]) -> T:
        """A row known to be stored (this process wrote it), converted; sqlalchemy's NoResultFound if it is not."""
        with self.session() as session:
            return convert(session.get_one(model, key))

    @contextmanager
    def bounded(self, timeout: float | None, *, flush: bool = False) -> Iterator[Connection]:
        """A connection whose statements wait at most `timeout` seconds for another writer's lock (None: SQLite's
        usual 30 s, PostgreSQL without limit), so a stuck store fails the caller instead of holding its thread.
        `flush`: on SQLite this connection commits with synchronous=FULL (the log synced on every commit, so a
        power cut cannot take it back; the rest of the store keeps WAL's NORMAL, which survives only a killed
        process); PostgreSQL's default synchronous_commit already flushes. Whatever the caller did not commit is
        rolled back when the block ends.
        """
        with self.engine.connect() as connection:
            if connection.dialect.name != "sqlite":
                if timeout is not None:  # SET LOCAL: undone with the transaction
                    ms = _milliseconds(timeout)
                    connection.exec_driver_sql(f"SELECT set_config('lock_timeout', '{ms}', true), "
                                              f"set_config('statement_timeout', '{ms}', true)")
                yield connection
                return
            # Pooled connections are shared: each setting changed here is put back before the pool has it again.
            changed = ([("busy_timeout", _milliseconds(timeout), SQLITE_BUSY_SECONDS * 1000)] if timeout is not None
                       else []) + ([("synchronous", "FULL", "NORMAL")] if flush else [])
            try:
                for name, value, _ in changed:
                    connection.exec_driver_sql(f"PRAGMA {name} = {value}")
                yield connection
            finally:
                try:
                    connection.rollback()
                    for name, _, usual in changed:
                        connection.exec_driver_sql(f"PRAGMA {name} = {usual}")
                except Exception:  # a connection whose settings are unknown must not go back to the pool
                    connection.invalidate()
                    raise

    def takes_a_write(self, timeout: float) -> str | None:
        """None when the store takes and commits a write within `timeout` seconds, else why not. The probe
        updates its own row (`probes`) and commits it: a read-only, locked or full store (a full disk fails the
        commit, which a write rolled back never reaches) says so."""
        busy = self.pool_in_use()
        if busy is not None and busy[0] >= busy[1]:
            return (f"all {busy[1]} database connections of this process are in use: its threads are blocked on "
                    "the store (or the pool is too small for them)")
        try:
            with self.bounded(timeout) as connection:
                connection.execute(text("UPDATE probes SET at = :at WHERE name = 'readyz'"), {"at": datetime.now(UTC)})
                connection.commit()
        except Exception as exc:  # whatever the driver says: the probe's verdict, not a crash of /readyz
            return f"the store does not take a write: {exc.__class__.__name__}: {str(exc).splitlines()[0][:200]}"
        return None

    def pool_in_use(self) -> tuple[int, int] | None:
        """(connections checked out, the most the pool hands out), or None for a pool without a limit."""
        pool = self.engine.pool
        if not isinstance(pool, QueuePool):
            return None
        return pool.checkedout(), self._pool_limit

    def dispose(self, close: bool = True) -> None:
        """Drop the pooled connections; close=False in a forked child, whose parent still owns their sockets."""
        self.engine.dispose(close=close)


def _milliseconds(seconds: float) -> int:
    return max(int(seconds * 1000), 1)
