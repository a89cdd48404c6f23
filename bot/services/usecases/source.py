"""Where a repository's commits come from (RepoSource), and one session of them per delivery.

A delivery's handlers run one after another and each opens the repository: inside `session()` the first open
fetches and later ones reuse that clone (one fetch per repository per delivery, however many handlers read it).
Outside a session (the CLI, a test calling one use case) every open fetches, as it always did."""
from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from bot.adapters.git import GitRepository


class NotWatched(Exception):
    """An event for a repository a local-mode server has no source for: failed at once, never retried."""


class _Sessions(threading.local):
    def __init__(self) -> None:
        self.opened: dict[str, GitRepository] | None = None  # None: this thread is in no delivery's session
        self.in_use: dict[str, int] = {}  # how many open() blocks of each repository are running now


class RepoSource:
    def __init__(self, fetch: Callable[[str, int | None], Path] | None = None,
                 local: dict[str, Path] | None = None,
                 push: Callable[[str, int | None, str], None] | None = None) -> None:
        self._fetch = fetch
        self._local = local or {}
        self._push = push
        self._sessions = _Sessions()  # each worker thread runs its own delivery

    @contextmanager
    def session(self) -> Iterator[None]:
        """One delivery: each repository fetched at its first open, the clone then shared until the block ends.
        A failed fetch is not remembered: a later open (a retry with a new token) fetches again."""
        if self._sessions.opened is not None:  # already inside one: the outer session owns the clones
            yield
            return
        opened: dict[str, GitRepository] = {}
        self._sessions.opened = opened
        try:
            yield
        finally:
            self._sessions.opened = None
            for repo in opened.values():
                repo.close()

    @contextmanager
    def open(self, full_name: str, installation_id: int | None) -> Iterator[GitRepository]:
        opened, in_use = self._sessions.opened, self._sessions.in_use
        if opened is None:
            repo = GitRepository(self._fetched(full_name, installation_id), full_name=full_name)
            try:
                yield repo
            finally:
                repo.close()
            return
        if full_name not in opened:
            opened[full_name] = GitRepository(self._fetched(full_name, installation_id), full_name=full_name)
        repo = opened[full_name]
        in_use[full_name] = in_use.get(full_name, 0) + 1
        try:
            yield repo
        finally:
            in_use[full_name] -= 1
            if not in_use[full_name]:
                del in_use[full_name]
                # Its git processes end with each use (a reconcile visits every repository); the clone and
                # what was read from it stay for the delivery's next handler.
                repo.close()

    def _fetched(self, full_name: str, installation_id: int | None) -> Path:
        if full_name in self._local:
            return self._local[full_name]
        if self._fetch is not None:
            return self._fetch(full_name, installation_id)
        # Not transient: retrying cannot make an unwatched repository appear, it only repeats the failure.
        watched = ", ".join(self.known()) or "none"
        raise NotWatched(f"no source for {full_name}: this local-mode server watches {watched}; "
                         f"serve with `perfbot serve --repo PATH` on a checkout of {full_name} to follow it")

    def known(self) -> list[str]:
        return sorted(self._local)

    def is_local(self, full_name: str) -> bool:
        return full_name in self._local

    def publish(self, full_name: str, installation_id: int | None, branch: str) -> None:
        """Make a bot branch visible where people review it: pushed to GitHub; local branches already are."""
        if not self.is_local(full_name) and self._push is not None:
            self._push(full_name, installation_id, branch)
