"""Shared fixtures: a real PostgreSQL server and sshd for the session (each xdist worker has its own), and a
store on SQLite or PostgreSQL."""
from __future__ import annotations

import itertools

import pytest

from tests.github_fixtures import github, github_app_key  # noqa: F401  (fixtures for every test module)
from tests.gitrepo import RepoBuilder
from tests.postgres import PostgresServer
from tests.sshd import sshd  # noqa: F401  (one sshd per session: per xdist worker)

_database_names = itertools.count(1)


@pytest.fixture(scope="session")
def postgres_server():
    server = PostgresServer().start()
    yield server
    server.stop()


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def db_url(request, tmp_path):
    """A fresh, empty database URL: once on SQLite, once on the real PostgreSQL server."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'perfbot.sqlite3'}"
    server = request.getfixturevalue("postgres_server")
    return server.create_database(f"perfbot_test_{next(_database_names)}")


@pytest.fixture
def database(db_url):
    from bot.adapters.store.engine import Database

    db = Database(db_url)
    yield db
    db.dispose()


@pytest.fixture
def git_repo(tmp_path) -> RepoBuilder:
    return RepoBuilder(tmp_path / "repo")
