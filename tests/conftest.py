"""Shared fixtures: a real PostgreSQL server and sshd for the session (each xdist worker has its own), and a
store on SQLite or PostgreSQL; and the order xdist hands test files out in."""
from __future__ import annotations

import itertools

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
