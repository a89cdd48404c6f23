"""Test shortcuts for whole flows: sync a builder's repository into a store, then mirror what it touched."""
from __future__ import annotations

from bot.adapters.git import GitRepository
from bot.services.mirror import MirrorSummary, mirror_repo
from bot.services.sync import sync


def sync_and_mirror(database, builder, tracker, key: str) -> MirrorSummary:
    repo = GitRepository(builder.root, key=key)
    try:
        summary = sync(database, repo)
    finally:
        repo.close()
    return mirror_repo(database, tracker, key, summary.touched)
