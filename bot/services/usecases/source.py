"""Where a repository's commits come from: a bare clone fetched from GitHub, or a local path."""
from __future__ import annotations

from contextlib import contextmanager
from pathlib import Path
from typing import Callable, Iterator

from bot.adapters.git import GitRepository


class NotWatched(Exception):
    """An event for a repository a local-mode server has no source for: failed at once, never retried."""


class RepoSource:
    def __init__(self, fetch: Callable[[str, int | None], Path] | None = None,
                 local: dict[str, Path] | None = None,
                 push: Callable[[str, int | None, str], None] | None = None) -> None:
        self._fetch = fetch
        self._local = local or {}
        self._push = push

    @contextmanager
    def open(self, full_name: str, installation_id: int | None) -> Iterator[GitRepository]:
        if full_name in self._local:
            path = self._local[full_name]
        elif self._fetch is not None:
            path = self._fetch(full_name, installation_id)
        else:
            # Not transient: retrying cannot make an unwatched repository appear, it only repeats the failure.
            watched = ", ".join(self.known()) or "none"
            raise NotWatched(f"no source for {full_name}: this local-mode server watches {watched}; "
                             f"serve with `perfbot serve --repo PATH` on a checkout of {full_name} to follow it")
        repo = GitRepository(path, key=full_name)
        try:
            yield repo
        finally:
            repo.close()

    def known(self) -> list[str]:
        return sorted(self._local)

    def is_local(self, full_name: str) -> bool:
        return full_name in self._local

    def publish(self, full_name: str, installation_id: int | None, branch: str) -> None:
        """Make a bot branch visible where people review it: pushed to GitHub; local branches already are."""
        if not self.is_local(full_name) and self._push is not None:
            self._push(full_name, installation_id, branch)
