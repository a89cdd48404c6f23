"""A real, throwaway PostgreSQL server for the test session, started with initdb and pg_ctl."""
from __future__ import annotations

import glob
import os
import pwd
import shutil
import subprocess
import tempfile
from pathlib import Path

from tests.servers import free_port


def _binary(name: str) -> str:
    found = shutil.which(name) or next(iter(sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"), reverse=True)), None)
    if not found:
        raise RuntimeError(f"{name} not found: run ./test.sh, which installs PostgreSQL, or install the 'postgresql' "
                           "package")
    return found


class PostgresServer:
    """initdb into a temp folder, start on a free loopback port, stop and remove on exit.

    PostgreSQL refuses to run as root, so as root the server runs as the `postgres` system user.
    """

    def __init__(self) -> None:
        self.root = Path(tempfile.mkdtemp(prefix="perfbot-pg-"))
        self.data = self.root / "data"
        self.port = free_port()
        self.user = "perfbot"
        self._as_user: list[str] = []
        if os.geteuid() == 0:
            owner = pwd.getpwnam("postgres")
            os.chown(self.root, owner.pw_uid, owner.pw_gid)
            self._as_user = ["runuser", "-u", "postgres", "--"]

    def _run(self, *args: str) -> None:
        subprocess.run([*self._as_user, *args], check=True, capture_output=True, timeout=120)

    def start(self) -> PostgresServer:
        self._run(_binary("initdb"), "-D", str(self.data), "-U", self.user, "--auth=trust", "-E", "UTF8", "--no-sync")
        for attempt in range(3):  # a parallel worker may take the free port first: then another one
            try:
                self.resume()
                return self
            except subprocess.CalledProcessError:
                if attempt == 2:
                    raise
                self.port = free_port()
        return self

    def resume(self) -> None:
        """Start the server (again, after `pause`) on its port."""
        options = (f"-p {self.port} -k {self.root} -c listen_addresses=127.0.0.1 -c fsync=off "
                   "-c full_page_writes=off")
        self._run(_binary("pg_ctl"), "-D", str(self.data), "-o", options, "-l", str(self.root / "log"), "-w", "start")

    def pause(self) -> None:
        """Stop the server as a restart does (every connection dropped), keeping its data for `resume`."""
        self._run(_binary("pg_ctl"), "-D", str(self.data), "-m", "fast", "-w", "stop")

    def stop_now(self) -> None:
        """Stop the server at once, as a crash would: every client connection cut, new ones refused."""
        self._run(_binary("pg_ctl"), "-D", str(self.data), "-m", "immediate", "-w", "stop")

    def start_again(self) -> None:
        self.resume()

    def url(self, database: str = "postgres") -> str:
        return f"postgresql+psycopg://{self.user}@127.0.0.1:{self.port}/{database}"

    def create_database(self, name: str, template: str | None = None) -> str:
        """A new database, empty or a copy of `template` (a database nobody is connected to)."""
        import psycopg

        with psycopg.connect(f"host=127.0.0.1 port={self.port} user={self.user} dbname=postgres",
                             autocommit=True) as conn:
            # both names come from the test suite itself, never from a test's input
            conn.execute(f'CREATE DATABASE "{name}"' + (f' TEMPLATE "{template}"' if template else ""))
        return self.url(name)

    def stop(self) -> None:
        try:
            self._run(_binary("pg_ctl"), "-D", str(self.data), "-m", "immediate", "-w", "stop")
        finally:
            shutil.rmtree(self.root, ignore_errors=True)
