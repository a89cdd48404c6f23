"""PyGithub clients: a token or a GitHub App installation, quick retries of outages, errors classified; a rate
limit is never slept on here but handed to the queue, and an installation token GitHub refuses can be renewed."""
from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from urllib.parse import parse_qs, urlsplit

import requests
from github import Auth, Github, GithubException, GithubIntegration, RateLimitExceededException
from github.Auth import TOKEN_REFRESH_THRESHOLD_TIMEDELTA
from github.InstallationAuthorization import InstallationAuthorization
from urllib3.util.retry import Retry

from bot.config import Settings
from bot.errors import CredentialsRejected, RateLimited, TransientError

# GitHub asks for at least a minute's pause after a secondary rate limit that names no time; a primary limit
# resets within the hour, so a longer wait is a header to distrust rather than a reason to park a delivery.
SECONDARY_RATE_LIMIT_WAIT = 60.0
MAX_RATE_LIMIT_WAIT = 3600.0

_requests: Counter[tuple[str, str]] = Counter()
_requests_lock = threading.Lock()


def request_counts() -> dict[tuple[str, str], int]:
    """GitHub API requests this process made, by (method, status); status `error` when none came back."""
    with _requests_lock:
        return dict(_requests)


def _count(method: str | None, status: str) -> None:
    with _requests_lock:
        _requests[(method or "-", status)] += 1


class CountingRetry(Retry):
    """urllib3's retry policy for GitHub: a few quick retries of what fails fast (5xx, a dropped connection), and
    nothing that says to wait. PyGithub's GithubRetry slept through rate limits in the worker's thread, Retry-After
    in full (600 s, past the worker's lease); here a rate-limited or Retry-After answer comes straight back, and
    `classified_errors` turns it into a TransientError due when GitHub says, so the queue does the waiting.

    It also counts every HTTP exchange, retries included: the retry policy is the one per-client hook PyGithub
    hands to the HTTP layer; urllib3 asks `is_retry` once about each response it receives, and calls `increment`
    without a response for each request that got none."""

    def __init__(self, **kwargs) -> None:
        kwargs.setdefault("status_forcelist", range(500, 600))
        kwargs.setdefault("allowed_methods", Retry.DEFAULT_ALLOWED_METHODS | {"GET", "POST"})
        kwargs.setdefault("respect_retry_after_header", False)
        super().__init__(**kwargs)

    def is_retry(self, method, status_code, has_retry_after=False):
        _count(method, str(status_code))
        return not has_retry_after and super().is_retry(method, status_code, has_retry_after)

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
                    lazy=True,  # objects fetched only when a field is read: fewer GET calls per mirror pass
                    seconds_between_requests=self.settings.github_request_interval,
                    seconds_between_writes=self.settings.github_write_interval,
                    # A few quick retries in-process; longer outages and rate limits go back to the queue.
                    retry=CountingRetry(total=3, backoff_factor=0.2),
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
                    with self._app() as app:
                        self._own_login = f"{app.get_app().slug}[bot]"
        return self._own_login

    def app_hook_deliveries(self, since: datetime, most: int = 1000) -> list[dict]:
        """The App webhook's delivery attempts since `since`, newest first (GET /app/hook/deliveries, pages
        followed by their cursor); each has GitHub's `id`, `guid`, `status` ("OK" or why not), `delivered_at`."""
        found: list[dict] = []
        with classified_errors("listing the App's webhook deliveries"), self._app() as app:
            parameters: dict[str, object] = {"per_page": 100}
            while len(found) < most:
                headers, page = app.requester.requestJsonAndCheck("GET", "/app/hook/deliveries",
                                                                  parameters=parameters)
                fresh = [d for d in page if _parse_time(d["delivered_at"]) >= since]
                found.extend(fresh)
                cursor = _next_cursor(headers.get("link") or headers.get("Link") or "")
                if len(fresh) < len(page) or cursor is None:
                    break
                parameters = {"per_page": 100, "cursor": cursor}
        return found

    def redeliver_app_hook(self, delivery_id: int) -> None:
        """Ask GitHub to send a failed delivery again (POST /app/hook/deliveries/{id}/attempts; 202)."""
        with classified_errors(f"redelivering webhook delivery {delivery_id}"), self._app() as app:
            app.requester.requestJsonAndCheck("POST", f"/app/hook/deliveries/{int(delivery_id)}/attempts")

    @contextmanager
    def _app(self) -> Iterator[GithubIntegration]:
        """The App itself (its JWT), for the /app endpoints."""
        app = GithubIntegration(auth=self._app_auth(), base_url=self.settings.github_api_url, timeout=20,
                                retry=CountingRetry(total=3, backoff_factor=0.2))
        try:
            yield app
        finally:
            app.close()

    def git_token(self, installation_id: int | None) -> str:
        """A token for `git fetch`: the configured one, or the installation's (renewed before it expires)."""
        self.for_installation(installation_id)  # an App installation auth needs its client's requester
        key = None if self.settings.github_token else installation_id
        with classified_errors("getting an installation token"):
            return self._auths[key].token

    def renew_token(self, installation_id: int | None) -> bool:
        """Forget the installation's token (GitHub refused it before its stated expiry), so the next request mints
        a new one; every installation's for a job that names none (a reconcile, a bench run). False when there is
        nothing to renew: a configured token, or no installation token yet."""
        with self._lock:
            auths = [a for key, a in self._auths.items() if installation_id is None or key == installation_id]
        renewable = [a for a in auths if isinstance(a, RenewableInstallationAuth)]
        for auth in renewable:
            auth.drop()
        return bool(renewable)

    def _auth_for(self, key: int | None) -> Auth.Auth:
        if key not in self._auths:
            self._auths[key] = self._auth(key)
        return self._auths[key]

    def _auth(self, installation_id: int | None) -> Auth.Auth:
        if self.settings.github_token:
            return Auth.Token(self.settings.github_token)
        if installation_id is None:
            raise TransientError("no installation is known for this repository yet; waiting for an installation event")
        return RenewableInstallationAuth(self._app_auth(), installation_id)

    def _app_auth(self) -> Auth.AppAuth:
        app_id, key = self.settings.github_app_id, self.settings.github_private_key
        if not app_id or not key:  # Settings.check_github refuses half an App; local mode makes no client
            raise ValueError("no GitHub token and no GitHub App (id and private key) configured")
        return Auth.AppAuth(app_id, key)

    def close(self) -> None:
        with self._lock:
            for client in self._clients.values():
                client.close()
            self._clients.clear()


class RenewableInstallationAuth(Auth.AppInstallationAuth):
    """An installation's token, minted on first use and again shortly before its stated expiry, as PyGithub's
    AppInstallationAuth does, that can also be dropped when GitHub refuses it earlier (a 401)."""

    def __init__(self, app_auth: Auth.AppAuth, installation_id: int) -> None:
        super().__init__(app_auth, installation_id)
        self._held: InstallationAuthorization | None = None
        self._held_lock = threading.Lock()

    @property
    def token(self) -> str:
        with self._held_lock:
            held = self._held
            if held is None or held.expires_at - TOKEN_REFRESH_THRESHOLD_TIMEDELTA < datetime.now(UTC):
                held = self._held = self._get_installation_authorization()
            return held.token

    def drop(self) -> None:
        with self._held_lock:
            self._held = None


@contextmanager
def classified_errors(what: str) -> Iterator[None]:
    """GitHub outages and rate limits become TransientError, due when GitHub says (retried later by the queue);
    a 401 becomes CredentialsRejected; other API errors stay permanent."""
    try:
        yield
    except GithubException as exc:
        wait = rate_limit_wait(exc.status, exc.headers, isinstance(exc, RateLimitExceededException))
        if wait is not None:
            raise RateLimited(f"{what}: GitHub rate limit ({exc.status}); retrying in {wait:.0f}s",
                              retry_after=wait) from None
        if exc.status >= 500:
            raise TransientError(f"{what}: GitHub answered {exc.status}", retry_after=_seconds(exc.headers)) from None
        message = exc.data.get("message") if isinstance(exc.data, dict) else str(exc.data)
        if exc.status == 401:
            raise CredentialsRejected(f"{what}: GitHub refused perfbot's credentials (401 {message})") from None
        raise GithubException(exc.status, {"message": f"{what}: {message}"}, exc.headers) from None
    except requests.RequestException as exc:  # unreachable, timed out, or still failing after the quick retries
        raise TransientError(f"{what}: GitHub unreachable ({exc.__class__.__name__})") from None


def rate_limit_wait(status: int, headers: dict | None, says_rate_limit: bool = False,
                    now: float | None = None) -> float | None:
    """Seconds to wait before asking again when a 403/429 is a rate limit (GitHub's rules: Retry-After; else, with
    no requests remaining, until X-RateLimit-Reset; else a minute), None when it is not one."""
    if status not in (403, 429):
        return None
    headers = {k.lower(): v for k, v in (headers or {}).items()}
    wait = _seconds(headers)
    if wait is None and headers.get("x-ratelimit-remaining") == "0":
        try:
            # +1: GitHub does not say when within that second the window turns
            wait = float(headers["x-ratelimit-reset"]) - (time.time() if now is None else now) + 1
        except (KeyError, ValueError):
            wait = None
    if wait is None:
        if not (says_rate_limit or status == 429 or headers.get("x-ratelimit-remaining") == "0"):
            return None  # a 403 that is not a limit: a permission GitHub refuses
        wait = SECONDARY_RATE_LIMIT_WAIT
    return min(max(wait, 1.0), MAX_RATE_LIMIT_WAIT)


def _parse_time(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def _next_cursor(link: str) -> str | None:
    """The `cursor` of the rel="next" page in GitHub's Link header, or None on the last page."""
    for part in link.split(","):
        if 'rel="next"' in part:
            url = part.split(";", 1)[0].strip().strip("<>")
            cursor = parse_qs(urlsplit(url).query).get("cursor")
            return cursor[0] if cursor else None
    return None


def _seconds(headers: dict | None) -> float | None:
    """The Retry-After header in seconds (GitHub sends seconds), or None."""
    headers = {k.lower(): v for k, v in (headers or {}).items()}
    try:
        return float(headers["retry-after"])
    except (KeyError, ValueError):
        return None
