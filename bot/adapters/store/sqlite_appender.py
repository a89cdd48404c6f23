"""The delivery queue's durable writes on SQLite, through one sqlite3 connection of its own.

The acknowledgement path waits for these writes, and SQLAlchemy's engine (pool checkout, events, per-statement
compilation and result objects) cost several times the insert itself. The statement and every value are still
SQLAlchemy's: the INSERT is compiled from the `deliveries` table and each value goes through its column type's
bind processor, so a row written here reads back exactly like one the ORM wrote. Only the group-commit leader
writes (one at a time), in `BEGIN IMMEDIATE` ... `COMMIT` with synchronous=FULL, as `Database.durable()` does.
"""
from __future__ import annotations

import os
import sqlite3
import threading

from sqlalchemy import Table
from sqlalchemy.dialects import sqlite


class SqliteAppender:
    def __init__(self, path: str, table: Table, key: str) -> None:
        dialect = sqlite.dialect()
        compiled = sqlite.insert(table).on_conflict_do_nothing(index_elements=[table.c[key]]).compile(dialect=dialect)
        self._sql = str(compiled)
        self._order = tuple(compiled.positiontup)  # the column of each `?`, in order
        self._processors = {c.name: c.type.bind_processor(dialect) for c in table.columns}
        self._path = path
        self._lock = threading.Lock()  # the group commit has one leader at a time; this makes it certain
        self._connection: sqlite3.Connection | None = None
        self._pid = 0

    def write(self, rows: list[dict]) -> list[bool]:
        """Insert each row unless its key is stored already (True: stored now), all in one durable transaction."""
        with self._lock:
            connection = self._open()
            if len(rows) == 1:  # a statement alone is its own durable transaction: one call into SQLite, not three
                return [connection.execute(self._sql, self._values(rows[0])).rowcount == 1]
            connection.execute("BEGIN IMMEDIATE")
            try:
                stored = [connection.execute(self._sql, self._values(row)).rowcount == 1 for row in rows]
                connection.execute("COMMIT")
            except BaseException:
                if connection.in_transaction:
                    connection.execute("ROLLBACK")
                raise
            return stored

    def _values(self, row: dict) -> tuple:
        out = []
        for name in self._order:
            value, process = row.get(name), self._processors[name]
            out.append(process(value) if process is not None and value is not None else value)
        return tuple(out)

    def _open(self) -> sqlite3.Connection:
        if self._connection is None or self._pid != os.getpid():  # a forked child opens its own
            connection = sqlite3.connect(self._path, timeout=30, check_same_thread=False, isolation_level=None)
            for pragma in ("journal_mode=WAL", "synchronous=FULL", "foreign_keys=ON"):
                connection.execute(f"PRAGMA {pragma}")
            self._connection, self._pid = connection, os.getpid()
        return self._connection

    def close(self) -> None:
        with self._lock:
            if self._connection is not None and self._pid == os.getpid():
                self._connection.close()
            self._connection = None
