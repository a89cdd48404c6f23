"""Opening a store: engine from a URL, schema brought to head by Alembic, sessions handed out."""
from __future__ import annotations

from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from alembic import command
from alembic.config import Config
from sqlalchemy import create_engine, event
from sqlalchemy.engine import Engine, make_url
from sqlalchemy.exc import NoSuchModuleError
from sqlalchemy.orm import Session, sessionmaker

MIGRATIONS = Path(__file__).with_name("migrations")


class StoreError(Exception):
    """The store cannot be opened or used; the message says what to do."""


def default_url(instance_dir: Path) -> str:
    return f"sqlite:///{instance_dir / 'perfbot.sqlite3'}"


def _sqlite_pragmas(dbapi_connection, _record) -> None:
    # WAL lets the CLI read while a sync writes; foreign keys are off by default in SQLite.
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.close()


def make_engine(url: str) -> Engine:
    try:
        parsed = make_url(url)
    except Exception as exc:  # sqlalchemy raises ArgumentError with the bad URL inside
        raise StoreError(f"not a database URL: {url!r} ({exc}); use sqlite:///PATH or postgresql+psycopg://...") from None
    if parsed.drivername == "postgresql":
        parsed = parsed.set(drivername="postgresql+psycopg")
    if parsed.drivername.startswith("sqlite"):
        if parsed.database and parsed.database != ":memory:":
            Path(parsed.database).parent.mkdir(parents=True, exist_ok=True)
        engine = create_engine(parsed, connect_args={"timeout": 30})
        event.listen(engine, "connect", _sqlite_pragmas)
        return engine
    try:
        return create_engine(parsed, pool_pre_ping=True)
    except (ModuleNotFoundError, NoSuchModuleError) as exc:
        raise StoreError(f"no database driver for {parsed.drivername!r} ({exc}); perfbot supports sqlite:/// and "
                         "postgresql+psycopg:// (pip install 'perfbot[postgres]')") from None


def migrate(engine: Engine, revision: str = "head") -> None:
    """Bring the schema to `revision`; safe to run on every start since Alembic skips applied steps."""
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

    def dispose(self) -> None:
        self.engine.dispose()
