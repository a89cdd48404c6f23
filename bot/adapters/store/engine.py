"""Opening a store: engine from a URL, schema brought to head by Alembic, sessions handed out."""
from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

from sqlalchemy import create_engine, event
from sqlalchemy.engine import Connection, Engine, make_url
from sqlalchemy.exc import NoSuchModuleError
from sqlalchemy.orm import Session, sessionmaker

MIGRATIONS = Path(__file__).with_name("migrations")
SQLITE_BUSY_SECONDS = 30  # how long a connection waits for another's write lock before "database is locked"

T = TypeVar("T")


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


def make_engine(url: str) -> Engine:
    """An engine for the URL, PostgreSQL's driver chosen when the URL names none."""
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
        engine = create_engine(parsed, connect_args={"timeout": SQLITE_BUSY_SECONDS})
        event.listen(engine, "connect", _sqlite_pragmas)
        return engine
    try:
        return create_engine(parsed, pool_pre_ping=True)
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
    with engine.begin() as connection:
        config.attributes["connection"] = connection
        command.upgrade(config, revision)


class Database:
    """An open store: one engine, a session factory, the schema at head."""

    def __init__(self, url: str, *, run_migrations: bool = True) -> None:
        self.url = url
        self.engine = make_engine(url)
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
        """None when the store would take a write within `timeout` seconds, else why not. The probe is a DELETE
        that matches no row, rolled back: it needs the write lock (SQLite) or a writable transaction (a read-only
        PostgreSQL), so a read-only or locked store says so, and nothing is ever written."""
        try:
            with self.bounded(timeout) as connection:
                connection.exec_driver_sql("DELETE FROM deliveries WHERE id IS NULL")
        except Exception as exc:  # whatever the driver says: the probe's verdict, not a crash of /readyz
            return f"the store does not take a write: {exc.__class__.__name__}: {str(exc).splitlines()[0][:200]}"
        return None

    def dispose(self, close: bool = True) -> None:
        """Drop the pooled connections; close=False in a forked child, whose parent still owns their sockets."""
        self.engine.dispose(close=close)


def _milliseconds(seconds: float) -> int:
    return max(int(seconds * 1000), 1)
