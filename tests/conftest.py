"""Shared fixtures: a real PostgreSQL server and sshd for the session (each xdist worker has its own), and a
store on SQLite or PostgreSQL; and the order xdist hands test files out in."""
from __future__ import annotations

import itertools
import shutil
from pathlib import Path

import pytest

from tests.github_fixtures import github, github_app_key  # noqa: F401  (fixtures for every test module)
from tests.gitrepo import RepoBuilder
from tests.postgres import PostgresServer
from tests.sshd import sshd  # noqa: F401  (one sshd per session: per xdist worker)

_database_names = itertools.count(1)

# The longest test files, longest first (each file runs on one xdist worker, `--dist loadfile`). ./test.sh passes
# --no-loadscope-reorder so that xdist hands files out in collection order; this puts these first, so no worker
# starts a long file when the others are about to finish. From `./test.sh --durations=0`, summed per file;
# a file left off only runs later.
SLOW_FIRST = (
    "service/test_scale_out.py", "verify/test_guards.py", "service/test_commands_flow.py",
    "verify/test_verify_runtime_ssh.py", "verify/test_actions_runner.py", "verify/test_verify_runtime.py",
    "lead/test_lead_dashboard.py", "wire/test_webhook.py", "verify/test_fix_flow.py", "verify/test_sandbox.py",
    "adopt/test_demo.py", "service/test_answer_crash.py", "verify/test_verify_history.py",
    "service/test_push_order.py", "verify/test_verify.py", "verify/test_noise.py", "adopt/test_adopt.py",
    "verify/test_ssh_runner.py", "parity/test_parity_flow.py", "lead/test_fix_in_main.py",
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    rank = {f"tests/{name}": n for n, name in enumerate(SLOW_FIRST)}
    items.sort(key=lambda item: rank.get(item.nodeid.split("::", 1)[0], len(rank)))  # stable: the rest keep order


@pytest.fixture(scope="session")
def postgres_server():
    server = PostgresServer().start()
    yield server
    server.stop()


@pytest.fixture(scope="session")
def migrated_sqlite(tmp_path_factory) -> Path:
    """One SQLite store migrated to head per session, copied for each test that asks for `database`."""
    from bot.adapters.store.engine import Database

    path = tmp_path_factory.mktemp("migrated") / "perfbot.sqlite3"
    Database(f"sqlite:///{path}").dispose()
    assert not path.with_name(path.name + "-wal").exists()  # closed: the whole store is in its one file
    return path


@pytest.fixture(scope="session")
def migrated_postgres(postgres_server) -> str:
    """One PostgreSQL database migrated to head per session, the template of each test's `database`."""
    from bot.adapters.store.engine import Database

    name = "perfbot_migrated"
    Database(postgres_server.create_database(name)).dispose()  # disposed: a template takes no connections
    return name


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def db_url(request, tmp_path):
    """A fresh database URL: once on SQLite, once on the real PostgreSQL server. Empty, unless the test also
    asks for `database`, which migrates it before the test body runs anyway: then it starts as a copy of one
    migrated per session (migrating every test's store cost ~0.1 s each, a minute of the suite's workers)."""
    migrated = "database" in request.fixturenames
    if request.param == "sqlite":
        path = tmp_path / "perfbot.sqlite3"
        if migrated:
            shutil.copyfile(request.getfixturevalue("migrated_sqlite"), path)
        return f"sqlite:///{path}"
    server = request.getfixturevalue("postgres_server")
    template = request.getfixturevalue("migrated_postgres") if migrated else None
    return server.create_database(f"perfbot_test_{next(_database_names)}", template=template)


@pytest.fixture
def database(db_url):
    from bot.adapters.store.engine import Database

    db = Database(db_url)  # already at head (see db_url): this only checks
    yield db
    db.dispose()


@pytest.fixture
def git_repo(tmp_path) -> RepoBuilder:
    return RepoBuilder(tmp_path / "repo")
