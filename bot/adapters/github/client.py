"""PyGithub clients: a token or a GitHub App installation, retries that honour Retry-After, errors classified."""
from __future__ import annotations

import threading
from collections import Counter
from contextlib import contextmanager
from typing import Iterator

import requests
from github import Auth, Github, GithubException, GithubIntegration, GithubRetry, RateLimitExceededException

from bot.config import Settings
from bot.errors import TransientError

# Longest a single call may sleep on a rate limit inside PyGithub; longer waits go back to the queue.
MAX_RATE_LIMIT_WAIT = 60

_requests: Counter[tuple[str, str]] = Counter()
_requests_lock = threading.Lock()


def request_counts() -> dict[tuple[str, str], int]:
    """GitHub API requests this process made, by (method, status); status `error` when none came back."""
    with _requests_lock:
        return dict(_requests)


def _count(method: str | None, status: str) -> None:
    with _requests_lock:
        _requests[(method or "-", status)] += 1


class CountingRetry(GithubRetry):
    """GithubRetry that also counts every HTTP exchange, retries included. The retry policy is the one
    per-client hook PyGithub hands to the HTTP layer: urllib3 asks `is_retry` once about each response it
    receives, and calls `increment` without a response for each request that got none."""

    def is_retry(self, method, status_code, has_retry_after=False):
        _count(method, str(status_code))
        return super().is_retry(method, status_code, has_retry_after)

    def increment(self, method=None, url=None, response=None, error=None, _pool=None, _stacktrace=None):
        if response is None and error is not None:
            _count(method, "error")
        return super().increment(method, url, response, error, _pool, _stacktrace)


class GitHubClients:
    """One PyGithub client per installation (App) or one for the token; App tokens are cached until expiry."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self._clients: dict[int | None, Github] = {}
        self._auths: dict[int | None, Auth.Auth] = {}
        self._own_login: str | None = None
        self._lock = threading.Lock()

    def for_installation(self, installation_id: int | None) -> Github:
        key = None if self.settings.github_token else installation_id
        with self._lock:
            client = self._clients.get(key)
            if client is None:
                client = self._clients[key] = Github(
                    base_url=self.settings.github_api_url, auth=self._auth_for(key), timeout=20, per_page=100,
                    lazy=True,
                    seconds_between_requests=self.settings.github_request_interval,
                    seconds_between_writes=self.settings.github_write_interval,  # objects fetched only when a field is read: fewer GET calls per mirror pass
                    # A few quick retries in-process; longer outages go back to the queue with backoff.
                    retry=CountingRetry(total=3, backoff_factor=0.2, max_rate_limit_wait=MAX_RATE_LIMIT_WAIT),
                )
            return client

    def own_login(self) -> str:
        """The login perfbot writes as, asked once: the token's user (GET /user), or the App's `<slug>[bot]`
        user (GET /app). Only what this login wrote is perfbot's own; an outage raises TransientError."""
        if self._own_login is None:
            with classified_errors("asking GitHub who perfbot is"):
                if self.settings.github_token:
                    self._own_login = self.for_installation(None).get_user().login
                else:
                    app = GithubIntegration(auth=Auth.AppAuth(self.settings.github_app_id, self.settings.github_private_key),
                                            base_url=self.settings.github_api_url, timeout=20,
                                            retry=CountingRetry(total=3, backoff_factor=0.2,
                                                                max_rate_limit_wait=MAX_RATE_LIMIT_WAIT))
                    try:
                        self._own_login = f"{app.get_app().slug}[bot]"
                    finally:
                        app.close()
        return self._own_login

    def git_token(self, installation_id: int | None) -> str:
        """A token for `git fetch`: the configured one, or the installation's (renewed before it expires)."""
        self.for_installation(installation_id)  # an App installation auth needs its client's requester
        key = None if self.settings.github_token else installation_id
        with classified_errors("getting an installation token"):
            return self._auths[key].token

    def _auth_for(self, key: int | None) -> Auth.Auth:
        if key not in self._auths:
            self._auths[key] = self._auth(key)
        return self._auths[key]

    def _auth(self, installation_id: int | None) -> Auth.Auth:
        if self.settings.github_token:
            return Auth.Token(self.settings.github_token)
        if installation_id is None:
            raise TransientError("no installation is known for this repository yet; waiting for an installation event")
        # AppInstallationAuth fetches an installation token and renews it shortly before it expires.
        app = Auth.AppAuth(self.settings.github_app_id, self.settings.github_private_key)
        return app.get_installation_auth(installation_id)

    def close(self) -> None:
        with self._lock:
            for client in self._clients.values():
                client.close()
            self._clients.clear()


@contextmanager
def classified_errors(what: str) -> Iterator[None]:
    """GitHub outages and rate limits become TransientError (retried later); other API errors stay permanent."""
    try:
        yield
    except RateLimitExceededException as exc:
        raise TransientError(f"{what}: GitHub rate limit ({exc.status})", retry_after=_retry_after(exc)) from None
    except GithubException as exc:
        if exc.status >= 500 or exc.status in (403, 429) and _retry_after(exc) is not None:
            raise TransientError(f"{what}: GitHub answered {exc.status}", retry_after=_retry_after(exc)) from None
        message = exc.data.get("message") if isinstance(exc.data, dict) else str(exc.data)
        raise GithubException(exc.status, {"message": f"{what}: {message}"}, exc.headers) from None
    except requests.RequestException as exc:  # unreachable, timed out, or still failing after PyGithub's retries
        raise TransientError(f"{what}: GitHub unreachable ({exc.__class__.__name__})") from None


def _retry_after(exc: GithubException) -> float | None:
    headers = {k.lower(): v for k, v in (exc.headers or {}).items()}
    try:
        return float(headers["retry-after"])
    except (KeyError, ValueError):
        return None
