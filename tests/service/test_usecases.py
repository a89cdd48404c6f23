"""The use cases as handlers and the CLI reach them: every `services.<use case>.<name>` they read exists, and
each use case sees only the Context and use cases it was given."""
from __future__ import annotations

import ast
import dataclasses
from pathlib import Path

import pytest

from bot.adapters.local_issues import FileIssues
from bot.adapters.store.engine import Database
from bot.services.bench.bench_flow import BenchFlow
from bot.services.bench.fix_flow import FixFlow
from bot.services.usecases import BotServices, RepoSource

ROOT = Path(__file__).resolve().parents[2]
CALLERS = sorted((ROOT / "handlers").glob("*.py")) + sorted((ROOT / "bot" / "cli").glob("*.py"))


@pytest.fixture
def services(tmp_path):
    db = Database(f"sqlite:///{tmp_path / 'perfbot.sqlite3'}")
    fixes = FixFlow(db, lambda delivery: True)
    yield BotServices(db, lambda name, _inst: FileIssues(tmp_path / "issues"), RepoSource(), bot_login="perfbot",
                      fixes=fixes, bench=BenchFlow(db, lambda conf, path, config: None))
    db.dispose()


def _reads(path: Path) -> set[tuple[str, str]]:
    """Each `services.<use case>.<name>` (or `runtime.services...`) in one module."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Attribute):
            holder = node.value.value
            if (isinstance(holder, ast.Name) and holder.id == "services") or \
                    (isinstance(holder, ast.Attribute) and holder.attr == "services"):
                found.add((node.value.attr, node.attr))
    return found


def test_every_use_case_a_handler_or_command_calls_exists(services):
    reads = {(path.name, *read) for path in CALLERS for read in _reads(path)}
    assert len(reads) > 25  # the walk finds the handlers' calls, not nothing
    missing = [f"{module}: services.{case}.{name}" for module, case, name in sorted(reads)
               if not hasattr(getattr(services, case, None), name)]
    assert missing == []


def test_use_cases_share_one_frozen_context_and_hold_no_other_state(services):
    context = services.context
    with pytest.raises(dataclasses.FrozenInstanceError):
        context.db = None  # type: ignore[misc]
    cases = [services.reports, services.fixes, services.guards, services.lead, services.commands]
    assert all(case.ctx is context for case in cases)
    # Only what a constructor was given (and flows built from it) lives on a use case: no mixin's borrowed self.
    assert services.commands.reports is services.reports and services.commands.lead is services.lead
    assert services.fixes.guards is services.guards and services.reports.fixes is services.fixes
    assert not any(hasattr(case, name) for case in cases for name in ("db", "trackers", "source", "bench"))
