"""Building real multi-commit git repositories for tests with GitPython."""
from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import git

EPOCH = datetime(2026, 11, 2, 9, 0, tzinfo=UTC)


class RepoBuilder:
    """A git repository on disk whose commits get distinct, increasing, deterministic dates."""

    def __init__(self, root: Path, branch: str = "main") -> None:
        self.root = root
        self.repo = git.Repo.init(root, initial_branch=branch)
        with self.repo.config_writer() as config:
            config.set_value("user", "name", "Test Runner")
            config.set_value("user", "email", "runner@example.invalid")
        self._tick = 0

    def write(self, path: str, text: str | bytes) -> RepoBuilder:
        target = self.root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(text, bytes):
            target.write_bytes(text)
        else:
            target.write_text(text, encoding="utf-8")
        self.repo.index.add([path])
        return self

    def delete(self, path: str) -> RepoBuilder:
        self.repo.index.remove([path], working_tree=True)
        return self

    def rename(self, old: str, new: str) -> RepoBuilder:
        (self.root / new).parent.mkdir(parents=True, exist_ok=True)
        self.repo.index.move([old, new])
        return self

    def commit(self, message: str, author: str = "SEQ agent", email: str = "seq-agent@example.invalid") -> str:
        self._tick += 1
        when = f"{int((EPOCH + timedelta(hours=self._tick)).timestamp())} +0000"
        actor = git.Actor(author, email)
        commit = self.repo.index.commit(message, author=actor, committer=actor, author_date=when, commit_date=when)
        return commit.hexsha


def sync_repo(database, builder: RepoBuilder, **kwargs):
    """One sync of a builder's repository into the store, the repository closed afterwards."""
    from bot.adapters.git import GitRepository
    from bot.services.reports.sync import sync

    repo = GitRepository(builder.root)
    try:
        return sync(database, repo, **kwargs)
    finally:
        repo.close()
