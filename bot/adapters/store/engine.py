"""Opening a store: engine from a URL, schema brought to head by Alembic, sessions handed out."""
from __future__ import annotations

from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from sqlalchemy import create_engine, event
from sqlalchemy.engine import Connection, Engine, make_url
from sqlalchemy.exc import NoSuchModuleError
from sqlalchemy.orm import Session, sessionmaker

MIGRATIONS = Path(__file__).with_name("migrations")
SQLITE_BUSY_SECONDS = 30  # how long a connection waits for another's write lock before "database is locked"


class StoreError(Exception):
    """The store cannot be opened or used; the message says what to do."""


def default_url(instance_dir: Path) -> str:
    return f"sqlite:///{instance_dir / 'perfbot.sqlite3'}"


def _sqlite_pragmas(synchronous: str):
    def on_connect(dbapi_connection, _record) -> None:
        # WAL lets the CLI read while a sync writes; foreign keys are off by default in SQLite. Under WAL, NORMAL
        # survives a killed process but may lose the last commits to a power cut; FULL syncs the log on every commit.
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.execute(f"PRAGMA synchronous={synchronous}")
        cursor.close()
    return on_connect


def make_engine(url: str, *, synchronous: str = "NORMAL") -> Engine:
    """An engine for the URL; `synchronous` is SQLite's setting for its connections (PostgreSQL ignores it)."""
    try:
        parsed = make_url(url)
    except Exception as exc:  # sqlalchemy raises ArgumentError with the bad URL inside
        raise StoreError(f"not a database URL: {url!r} ({exc}); use sqlite:///PATH or postgresql+psycopg://...") from None
    if parsed.drivername == "postgresql":
        parsed = parsed.set(drivername="postgresql+psycopg")
    if parsed.drivername.startswith("sqlite"):
        if parsed.database and parsed.database != ":memory:":
            Path(parsed.database).parent.mkdir(parents=True, exist_ok=True)
        engine = create_engine(parsed, connect_args={"timeout": SQLITE_BUSY_SECONDS})
        event.listen(engine, "connect", _sqlite_pragmas(synchronous))
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
        # A second engine on the same file, not possible for a private in-memory database (nothing to sync there).
        on_file = self.engine.dialect.name == "sqlite" and self.engine.url.database not in (None, "", ":memory:")
        self._durable_engine = make_engine(url, synchronous="FULL") if on_file else None

    @property
    def safe_url(self) -> str:
        """The URL with any password hidden, fit for messages and logs."""
        return make_url(self.url).render_as_string(hide_password=True)

    @contextmanager
    def session(self) -> Iterator[Session]:
        """A transaction: committed when the block ends, rolled back whole on any error."""
        with self._sessions() as session, session.begin():
            yield session

    @contextmanager
    def durable(self) -> Iterator[Connection]:
        """A Core transaction whose commit returns only once it is on disk, even against a power cut.

        On SQLite these transactions run on engine connections of their own that say synchronous=FULL, so the rest
        of the store keeps NORMAL's cheaper commits. On PostgreSQL the transaction asks for synchronous_commit, the
        default, in case the server was configured to answer commits before their flush.
        """
        with (self._durable_engine or self.engine).begin() as connection:
            if connection.dialect.name == "postgresql":
                connection.exec_driver_sql("SET LOCAL synchronous_commit TO on")
            yield connection

    def takes_a_write(self, timeout: float) -> str | None:
        """None when the store would take a write within `timeout` seconds, else why not. The probe is a DELETE
        that matches no row, rolled back: it needs the write lock (SQLite) or a writable transaction (a read-only
        PostgreSQL), so a read-only or locked store says so, and nothing is ever written."""
        ms = max(int(timeout * 1000), 1)
        try:
            with self.engine.connect() as connection:
                sqlite = connection.dialect.name == "sqlite"
                try:
                    if sqlite:  # the pool's connections wait 30 s on a lock; this one as long as the probe may
                        connection.exec_driver_sql(f"PRAGMA busy_timeout = {ms}")
                    else:  # undone with the transaction
                        connection.exec_driver_sql(f"SET LOCAL lock_timeout = {ms}")
                        connection.exec_driver_sql(f"SET LOCAL statement_timeout = {ms}")
                    connection.exec_driver_sql("DELETE FROM deliveries WHERE id IS NULL")
                finally:
                    connection.rollback()
                    if sqlite:
                        connection.exec_driver_sql(f"PRAGMA busy_timeout = {SQLITE_BUSY_SECONDS * 1000}")
                        connection.rollback()
        except Exception as exc:  # whatever the driver says: the probe's verdict, not a crash of /readyz
            return f"the store does not take a write: {exc.__class__.__name__}: {str(exc).splitlines()[0][:200]}"
        return None

    def dispose(self, close: bool = True) -> None:
        """Drop the pooled connections; close=False in a forked child, whose parent still owns their sockets."""
        for engine in (self.engine, self._durable_engine):
            if engine is not None:
                engine.dispose(close=close)
