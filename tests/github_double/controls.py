"""The test-facing half of `GitHubDouble`: seed state, inject faults, read what was recorded.

Everything here is thread-safe: tests call these methods while the server thread answers requests.
"""
from __future__ import annotations

import threading
import time
from collections import deque
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from cryptography.hazmat.primitives import serialization

from .state import (
    PERMISSION_OF_ROLE,
    Artifact,
    Comment,
    Dispatch,
    Identity,
    Installation,
    Issue,
    Label,
    PullInfo,
    State,
    WorkflowRun,
    blob_sha,
    utc_now,
)

if TYPE_CHECKING:
    from .server import RecordedRequest

SECONDARY_RATE_LIMIT_MESSAGE = (
    "You have exceeded a secondary rate limit. Please wait a few minutes before you try again. If you reach "
    "out to GitHub Support for help, please include the request ID 0000:0000:0000000:0000000:00000000.")
RATE_LIMIT_DOCS = "https://docs.github.com/rest/overview/rate-limits-for-the-rest-api"


@dataclass
class Fault:
    """An answer the double gives instead of the real one, to the next `remaining` requests."""

    status: int
    remaining: int
    message: str | None = None
    headers: dict[str, str] = field(default_factory=dict)
    documentation_url: str = "https://docs.github.com/rest"


@dataclass
class Hold:
    """The next request for one operation waits, before it is answered, until the test releases it: a client
    killed meanwhile leaves a request GitHub still carries out once released."""

    method: str
    template: str
    reached: threading.Event = field(default_factory=threading.Event)
    released: threading.Event = field(default_factory=threading.Event)
    answered: threading.Event = field(default_factory=threading.Event)  # carried out, its answer on its way

    def release(self) -> None:
        self.released.set()


class Controls:
    def __init__(self) -> None:
        self.state = State()  # live state; read it under `state.lock` while the server runs
        self._lock = threading.Lock()  # guards the lists below
        self._requests: list[RecordedRequest] = []
        self._faults: deque[Fault] = deque()
        self._holds: list[Hold] = []
        self.violations: list[str] = []  # requests (or, if checked, responses) GitHub's description rejects
        self.unimplemented: list[str] = []  # documented operations a request needed that the double lacks
        self.errors: list[str] = []  # tracebacks of the double's own bugs (answered 500)

    # -- what was recorded -------------------------------------------------------------------------------
    @property
    def requests(self) -> list[RecordedRequest]:
        """Every request received so far, oldest first (a copy)."""
        with self._lock:
            return list(self._requests)

    def writes(self) -> list[RecordedRequest]:
        """The POST, PATCH, PUT and DELETE requests received so far."""
        return [request for request in self.requests if request.is_write]

    def clear_requests(self) -> None:
        with self._lock:
            self._requests.clear()

    def _violation(self, problem: str) -> None:
        with self._lock:
            self.violations.append(problem)

    def take_violations(self) -> list[str]:
        """The violations so far, emptying the list (for tests that provoke them on purpose)."""
        with self._lock:
            taken, self.violations[:] = list(self.violations), []
        return taken

    def problems(self) -> list[str]:
        """Violations, unimplemented operations and the double's own errors: empty after a clean test."""
        with self._lock:
            return ([f"violation: {v}" for v in self.violations] + [f"unimplemented: {u}" for u in self.unimplemented]
                    + [f"double error: {e}" for e in self.errors])

    # -- fault injection -----------------------------------------------------------------------------------
    def fail_next(self, count: int = 1, status: int = 502) -> None:
        """Answer the next `count` requests with a server error (GitHub's 5xx), before authentication."""
        with self._lock:
            self._faults.append(Fault(status, count))

    def rate_limit_next(self, retry_after: int = 1, count: int = 1, status: int = 403, kind: str = "secondary") -> None:
        """Answer the next `count` requests as rate-limited, in GitHub's words.

        secondary: `status` (403, or 429 as GitHub also uses) with a `Retry-After` header and the message
        "You have exceeded a secondary rate limit...". primary: 403 with X-RateLimit-Remaining 0 and
        X-RateLimit-Reset `retry_after` seconds ahead, message "API rate limit exceeded ...".
        """
        if kind == "secondary":
            fault = Fault(status, count, SECONDARY_RATE_LIMIT_MESSAGE, {"Retry-After": str(retry_after)},
                          f"{RATE_LIMIT_DOCS}#about-secondary-rate-limits")
        elif kind == "primary":
            reset = int(time.time()) + retry_after
            fault = Fault(403, count, "API rate limit exceeded for user. (But here's the good news: Authenticated "
                                      "requests get a higher rate limit.)",
                          {"X-RateLimit-Limit": "5000", "X-RateLimit-Remaining": "0", "X-RateLimit-Used": "5000",
                           "X-RateLimit-Reset": str(reset), "X-RateLimit-Resource": "core"},
                          f"{RATE_LIMIT_DOCS}#about-the-primary-rate-limit")
        else:
            raise ValueError(f"kind must be 'secondary' or 'primary', not {kind!r}")
        with self._lock:
            self._faults.append(fault)

    def hold_next(self, method: str, template: str) -> Hold:
        """Keep the next `method` request for `template` (as GitHub's description spells it, e.g.
        /repos/{owner}/{repo}/issues/{issue_number}/comments) waiting until `release()`; then it is answered."""
        hold = Hold(method.upper(), template)
        with self._lock:
            self._holds.append(hold)
        return hold

    def _take_hold(self, method: str, template: str) -> Hold | None:
        with self._lock:
            hold = next((h for h in self._holds if (h.method, h.template) == (method.upper(), template)), None)
            if hold is not None:
                self._holds.remove(hold)
            return hold

    def _take_fault(self) -> Fault | None:
        with self._lock:
            if not self._faults:
                return None
            fault = self._faults[0]
            fault.remaining -= 1
            if fault.remaining <= 0:
                self._faults.popleft()
            return fault

    # -- seeding state -------------------------------------------------------------------------------------
    def add_token(self, token: str, login: str, kind: str = "User") -> None:
        """Accept `token` as `login` (kind "User" or "Bot") with access to every repository."""
        with self.state.lock:
            self.state.tokens[token] = Identity(self.state.user(login, kind))

    def add_repo(self, full_name: str, *, default_branch: str = "main", private: bool = False,
                 description: str | None = None) -> None:
        with self.state.lock:
            self.state.add_repo(full_name, default_branch=default_branch, private=private, description=description)

    def put_content(self, repo: str, path: str, data: bytes | str, *, ref: str | None = None) -> str:
        """Store a file (served by GET /repos/{o}/{r}/contents/{path}); returns its blob sha."""
        data = data.encode() if isinstance(data, str) else data
        with self.state.lock:
            target = self.state.repo_or_raise(repo)
            target.contents[(ref or target.default_branch, path.strip("/"))] = data
        return blob_sha(data)

    def add_label(self, repo: str, name: str, color: str = "ededed", description: str | None = None) -> None:
        with self.state.lock:
            target = self.state.repo_or_raise(repo)
            target.labels[name.lower()] = Label(self.state.next_id(), name, color, description)

    def add_issue(self, repo: str, title: str, body: str | None = None, *, user: str = "someone",
                  labels: tuple[str, ...] = (), state: str = "open") -> int:
        """Seed an issue (labels are created when missing); returns its number."""
        with self.state.lock:
            target, now = self.state.repo_or_raise(repo), utc_now()
            issue = Issue(self.state.next_id(), next(target.numbers), title, body, self.state.user(user), now, now)
            for name in labels:
                if target.label(name) is None:
                    self.add_label(repo, name)
                issue.labels.append(target.label(name))
            if state == "closed":
                issue.state, issue.state_reason, issue.closed_at = "closed", "completed", now
            target.issues[issue.number] = issue
            return issue.number

    def add_comment(self, repo: str, number: int, body: str, *, user: str = "someone", review: bool = False) -> int:
        """Seed a comment someone wrote on an issue or PR (`review`: on a pull request's diff); returns its id."""
        with self.state.lock:
            target, now = self.state.repo_or_raise(repo), utc_now()
            comment = Comment(self.state.next_id(), number, body, self.state.user(user), now, now)
            (target.review_comments if review else target.comments)[comment.id] = comment
            return comment.id

    def add_pull(self, repo: str, *, head_ref: str = "feature", head_sha: str | None = None,
                 base_ref: str | None = None, base_sha: str | None = None, title: str = "A pull request",
                 body: str | None = None, user: str = "contributor", merged: bool = False, draft: bool = False) -> int:
        """Seed a pull request (an issue too, as on GitHub); its head and base shas become known commits."""
        with self.state.lock:
            target = self.state.repo_or_raise(repo)
            number = self.add_issue(repo, title, body, user=user, state="closed" if merged else "open")
            base_ref = base_ref or target.default_branch
            base_sha = base_sha or target.resolve(base_ref) or blob_sha(f"{repo}@{base_ref}".encode())
            head_sha = head_sha or blob_sha(f"{repo}#{number}@{head_ref}".encode())
            target.branches.setdefault(base_ref, base_sha)
            target.branches[head_ref] = head_sha
            target.commits.setdefault(base_sha, f"Base of #{number}")
            target.commits.setdefault(head_sha, title)
            target.issues[number].pull = PullInfo(
                self.state.next_id(), head_ref, head_sha, base_ref, base_sha, merged,
                utc_now() if merged else None, blob_sha(f"merge {head_sha}".encode()) if merged else None, draft)
            return number

    def use_git_remotes(self, root) -> None:
        """Let pull requests name branches of the real git repositories `{root}/{owner}/{repo}.git`."""
        from pathlib import Path

        with self.state.lock:
            self.state.git_remotes = Path(root)

    def set_permission(self, repo: str, login: str, role: str) -> None:
        """A collaborator's role: admin, maintain, write, triage, read or none."""
        if role not in PERMISSION_OF_ROLE:
            raise ValueError(f"role must be one of {', '.join(PERMISSION_OF_ROLE)}, not {role!r}")
        with self.state.lock:
            self.state.user(login)
            self.state.repo_or_raise(repo).permissions[login.lower()] = role

    def install_app(self, installation_id: int, repos: list[str], key_pem: str | bytes, *, app_id: int = 1,
                    app_slug: str = "perfbot", account: str | None = None, token_ttl_seconds: int = 3600) -> None:
        """Install GitHub App `app_id` on `repos`. JWTs must be RS256-signed by the key (private or public
        PEM) and have iss=app_id; tokens minted for the installation reach only `repos`."""
        key_pem = key_pem.encode() if isinstance(key_pem, str) else key_pem
        if b"PRIVATE KEY" in key_pem:
            public_key = serialization.load_pem_private_key(key_pem, password=None).public_key()
        else:
            public_key = serialization.load_pem_public_key(key_pem)
        with self.state.lock:
            for full_name in repos:
                self.state.repo_or_raise(full_name)
            owner = self.state.user(account or repos[0].split("/")[0], "Organization")
            self.state.installations[installation_id] = Installation(
                installation_id, app_id, app_slug, owner, public_key, frozenset(r.lower() for r in repos),
                token_ttl_seconds)

    def set_app_webhook(self, url: str, secret: str) -> None:
        """Where the App's webhook deliveries go (`send_app_webhook`, and redeliveries asked of the API)."""
        from .routes_hooks import AppHook

        with self.state.lock:
            self.state.app_hook = AppHook(url, secret)

    def send_app_webhook(self, event: str, payload: dict | bytes, guid: str | None = None):
        """Deliver an event to the App's webhook as GitHub does, recorded for GET /app/hook/deliveries; returns
        the attempt (its `status`, "OK" or why not)."""
        from .routes_hooks import send

        return send(self.state, event, payload, guid=guid)

    def hook_attempts(self) -> list:
        with self.state.lock:
            return list(self.state.hook_deliveries)

    def expire_tokens(self) -> None:
        """Make every installation token expired now (the next use answers 401), to test token renewal."""
        with self.state.lock:
            for identity in self.state.tokens.values():
                if identity.installation_id is not None:
                    identity.expires_at = utc_now()

    # -- GitHub Actions --------------------------------------------------------------------------------------
    def add_workflow(self, repo: str, file_name: str) -> int:
        """A workflow file on the default branch that can be dispatched; returns its id."""
        with self.state.lock:
            target = self.state.repo_or_raise(repo)
            return target.workflows.setdefault(file_name, self.state.next_id())

    def dispatches(self, repo: str) -> list[Dispatch]:
        with self.state.lock:
            return list(self.state.repo_or_raise(repo).dispatches)

    def start_workflow_run(self, repo: str, dispatch: Dispatch, *, title: str | None = None,
                           actor: str | None = None) -> int:
        """The run GitHub starts for a dispatch; its title follows perfbot-bench.yml's run-name unless given."""
        with self.state.lock:
            target = self.state.repo_or_raise(repo)
            run = WorkflowRun(self.state.next_id(), dispatch.workflow,
                              title if title is not None else f"perfbot bench run {dispatch.inputs.get('run')}",
                              dispatch.ref, target.resolve(dispatch.ref) or blob_sha(dispatch.ref.encode()),
                              self.state.user(actor) if actor else dispatch.actor, utc_now(),
                              run_number=len(target.workflow_runs) + 1, status="in_progress")
            target.workflow_runs[run.id] = run
            return run.id

    def complete_workflow_run(self, repo: str, run_id: int, conclusion: str = "success",
                              artifacts: dict[str, bytes] | None = None, listed_size: int | None = None) -> None:
        """Finish a workflow run with `conclusion` and the artifact zips it uploaded (name -> bytes)."""
        with self.state.lock:
            run = self.state.repo_or_raise(repo).workflow_runs[run_id]
            run.status, run.conclusion = "completed", conclusion
            for name, data in (artifacts or {}).items():
                run.artifacts.append(Artifact(self.state.next_id(), name, data, utc_now(), size_in_bytes=listed_size))
