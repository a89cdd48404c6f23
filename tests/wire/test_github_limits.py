"""GitHub's limits through the webhook, the worker and the GitHub double: rate limits wait in the queue, a refused
installation token is renewed once, and a repository that cannot be fetched fails once with a reason."""
from __future__ import annotations

from datetime import UTC, datetime, timedelta

import git
import pytest
from sqlalchemy import update
from werkzeug.wrappers import Response

from bot.adapters.clones import RepositoryUnavailable, fetch_error
from bot.adapters.store.service_models import Delivery
from bot.app.runtime import Runtime
from bot.config import Settings
from bot.errors import CredentialsRejected, TransientError
from tests.gitrepo import RepoBuilder
from tests.reports import canonical_report
from tests.servers import serving
from tests.webhooks import post_delivery

SECRET = "limits-secret"
FULL_NAME = "acme/runtime"
INSTALLATION = 77


def settings(github, tmp_path, *, git_base_url=None, app_key=None) -> Settings:
    credentials = (dict(github_app_id="1234", github_private_key=app_key) if app_key
                   else dict(github_token=github.token))
    return Settings(instance_dir=tmp_path / "instance", database_url=f"sqlite:///{tmp_path / 'perfbot.sqlite3'}",
                    webhook_secrets=(SECRET,), github_api_url=github.url,
                    git_base_url=git_base_url or f"file://{tmp_path / 'remotes'}",
                    github_request_interval=0, github_write_interval=0, **credentials)


def push(url: str, head: str, delivery: str, full_name: str = FULL_NAME) -> None:
    payload = {"ref": "refs/heads/main", "after": head, "installation": {"id": INSTALLATION},
               "repository": {"full_name": full_name, "default_branch": "main"}}
    assert post_delivery(url, "push", payload, secret=SECRET, delivery=delivery).status_code == 202


def row(runtime: Runtime, delivery: str) -> dict:
    (found,) = [d for d in runtime.queue.listing(limit=50) if d["id"] == delivery]
    return found


def at(iso: str) -> datetime:
    moment = datetime.fromisoformat(iso)
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


@pytest.fixture
def remote(tmp_path):
    return RepoBuilder(tmp_path / "remotes" / "acme" / "runtime.git", branch="main")


@pytest.mark.parametrize("kind, status, seconds", [("secondary", 403, 600), ("secondary", 429, 600),
                                                   ("primary", 403, 90)])
def test_a_rate_limit_reschedules_the_delivery_without_holding_the_worker(github, remote, tmp_path, kind, status,
                                                                           seconds):
    github.add_repo(FULL_NAME)
    head = remote.write("devs/issues/perf_a.md", canonical_report("perf_a")).commit("a report")
    runtime = Runtime(settings(github, tmp_path))
    try:
        with serving(runtime.app) as url:
            push(url, head, "limited")
        github.rate_limit_next(retry_after=seconds, status=status, kind=kind)
        before = datetime.now(UTC)
        assert runtime.workers[0].run_once()
        after = datetime.now(UTC)
        limited = row(runtime, "limited")
        # Back in the queue, due when GitHub said (Retry-After, or the reset +1 s), and nobody's lease any more;
        # the wait is no failed attempt.
        assert (limited["status"], limited["attempts"]) == ("pending", 0), limited
        due = at(limited["next_attempt_at"])
        assert before + timedelta(seconds=seconds - 1) <= due <= after + timedelta(seconds=seconds + 1), limited
        assert "rate limit" in limited["error"]
        # The worker asked once and let go: the limited request was not sent again after a sleep in its thread.
        first, *rest = github.requests
        assert first.status == status and (first.method, first.path) not in [(r.method, r.path) for r in rest]
        assert not runtime.workers[0].run_once()  # not due: nobody takes it early
        with runtime.db.session() as session:  # time passes: the delivery is due now
            session.execute(update(Delivery).where(Delivery.id == "limited")
                            .values(next_attempt_at=datetime.now(UTC)))
        assert runtime.workers[0].run_once()
        assert (row(runtime, "limited")["status"], row(runtime, "limited")["attempts"]) == ("done", 1)
        with github.state.lock:
            assert len(github.state.repo_or_raise(FULL_NAME).issues) == 1
    finally:
        runtime.stop()


def test_an_installation_token_refused_before_its_expiry_is_renewed_once(github, github_app_key, remote, tmp_path):
    github.add_repo(FULL_NAME)
    github.install_app(INSTALLATION, [FULL_NAME], github_app_key, app_id=1234)
    first = remote.write("devs/issues/perf_a.md", canonical_report("perf_a")).commit("a report")
    runtime = Runtime(settings(github, tmp_path, app_key=github_app_key))
    try:
        with serving(runtime.app) as url:
            push(url, first, "first")
            assert runtime.workers[0].run_once() and row(runtime, "first")["status"] == "done"
            github.expire_tokens()  # GitHub ends the token though it said it had an hour left
            second = remote.write("devs/issues/perf_b.md", canonical_report("perf_b")).commit("b report")
            push(url, second, "second")
            assert runtime.workers[0].run_once()
        done = row(runtime, "second")
        assert (done["status"], done["attempts"]) == ("done", 1), done
        assert [r.status for r in github.requests if r.path.endswith("/access_tokens")] == [201, 201]
        assert 401 in [r.status for r in github.requests]
        with github.state.lock:
            assert len(github.state.repo_or_raise(FULL_NAME).issues) == 2
    finally:
        runtime.stop()


def test_a_token_refused_again_after_renewal_fails_at_once(github, github_app_key, remote, tmp_path):
    github.add_repo(FULL_NAME)
    github.install_app(INSTALLATION, [FULL_NAME], github_app_key, app_id=1234)
    head = remote.write("devs/issues/perf_a.md", canonical_report("perf_a")).commit("a report")
    runtime = Runtime(settings(github, tmp_path, app_key=github_app_key))
    try:
        with serving(runtime.app) as url:
            push(url, head, "refused")
        github.fail_next(count=10, status=401)  # the App is suspended: every token, new or old, is refused
        assert runtime.workers[0].run_once()
        failed = row(runtime, "refused")
        assert (failed["status"], failed["attempts"]) == ("failed", 1), failed
        assert "refused perfbot's credentials" in failed["error"]
    finally:
        runtime.stop()


def git_host(environ, start_response):
    """A git server over HTTP answering as GitHub does for a repository it will not serve, or while it is down."""
    owner_repo = environ["PATH_INFO"].split("/info/refs")[0].strip("/")
    answers = {"acme/gone.git": (404, "Repository not found."), "acme/private.git": (403, "Forbidden"),
               "acme/flaky.git": (503, "Service Unavailable")}
    status, text = answers.get(owner_repo, (404, "Not Found"))
    return Response(text, status=status, content_type="text/plain")(environ, start_response)


def test_a_repository_that_cannot_be_fetched_fails_once_with_a_reason(github, tmp_path):
    for name in ("acme/gone", "acme/private", "acme/flaky"):
        github.add_repo(name)
    with serving(git_host) as host:
        runtime = Runtime(settings(github, tmp_path, git_base_url=host))
        try:
            with serving(runtime.app) as url:
                for name in ("gone", "private", "flaky"):
                    push(url, "a" * 40, name, full_name=f"acme/{name}")
            while runtime.workers[0].run_once():
                pass
            outcome = {name: row(runtime, name) for name in ("gone", "private", "flaky")}
        finally:
            runtime.stop()
    for name in ("gone", "private"):
        assert (outcome[name]["status"], outcome[name]["attempts"]) == ("failed", 1), outcome[name]
        assert f"cannot fetch acme/{name}" in outcome[name]["error"]
        assert "App is installed" in outcome[name]["error"]
    assert "not found" in outcome["gone"]["error"] and "403" in outcome["private"]["error"]
    # A server error is an outage, not a verdict on the repository: it is retried later.
    assert (outcome["flaky"]["status"], outcome["flaky"]["attempts"]) == ("pending", 1), outcome["flaky"]


@pytest.mark.parametrize("stderr, with_token, kind", [
    # what git prints against github.com (https, the token in a header): a token GitHub refuses is renewed once
    ("remote: Invalid username or token. Password authentication is not supported for Git operations.\n"
     "fatal: Authentication failed for 'https://github.com/acme/runtime.git/'", True, CredentialsRejected),
    ("remote: Repository not found.\nfatal: repository 'https://github.com/acme/runtime.git/' not found", True,
     RepositoryUnavailable),
    ("fatal: unable to access 'https://github.com/acme/runtime.git/': Could not resolve host: github.com", True,
     TransientError),
    ("fatal: unable to access 'https://github.com/acme/runtime.git/': The requested URL returned error: 502", True,
     TransientError),
])
def test_what_git_says_on_github_decides_between_renewal_a_permanent_failure_and_a_retry(stderr, with_token, kind):
    error = fetch_error("acme/runtime", "https://github.com/acme/runtime.git",
                        git.GitCommandError(["git", "fetch"], 128, stderr=stderr.encode()), with_token)
    assert type(error) is kind and "acme/runtime" in str(error) and stderr.splitlines()[-1][:40] in str(error)
