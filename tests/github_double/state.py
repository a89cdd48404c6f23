"""What the GitHub double remembers: users, tokens, repositories and everything inside them.

Plain dataclasses behind one re-entrant lock (`State.lock`). The server holds the lock for the whole of a
request, and the control methods of `GitHubDouble` take it too, so a test thread and the server's request
threads never see half an update. Rendering to GitHub's JSON shapes lives in the routes modules; this module
knows nothing about HTTP.
"""
from __future__ import annotations

import base64
import hashlib
import itertools
import threading
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime

# Requests per window; GitHub's numbers for a user or installation token (search: per minute, here per hour).
RATE_LIMITS = {"core": 5000, "search": 30}
PERMISSION_OF_ROLE = {"admin": "admin", "maintain": "write", "write": "write", "triage": "read", "read": "read",
                      "none": "none"}


def utc_now() -> datetime:
    return datetime.now(UTC).replace(microsecond=0)


def iso(moment: datetime | None) -> str | None:
    """GitHub's timestamp format: 2024-05-01T12:00:00Z."""
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ") if moment else None


def parse_iso(text: str) -> datetime:
    """GitHub's timestamps as clients send them (`since`, `started_at`): ISO 8601, `Z` or an offset."""
    moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def node_id(kind: str, number: int) -> str:
    """Opaque like GitHub's (`I_kwDO...`): a type prefix and base64 of the database id."""
    return f"{kind}_" + base64.b64encode(f"{kind}{number}".encode()).decode().rstrip("=")


def blob_sha(data: bytes) -> str:
    """git's object id of a blob, which is what the contents API reports as `sha`."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


@dataclass
class User:
    login: str
    id: int
    type: str = "User"  # "User", "Bot" or "Organization"


@dataclass
class Identity:
    """Who a token acts as; installation tokens are limited to their installation's repositories."""

    user: User
    installation_id: int | None = None
    repositories: frozenset[str] | None = None  # lower-case "owner/name"; None means unrestricted
    expires_at: datetime | None = None
    app_id: int | None = None  # set for a GitHub App authenticated by its JWT (the /app endpoints)


@dataclass
class Label:
    id: int
    name: str
    color: str
    description: str | None = None
    default: bool = False


@dataclass
class Reaction:
    id: int
    content: str
    user: User
    created_at: datetime


@dataclass
class PullInfo:
    """The pull-request half of an issue (on GitHub every pull request is also an issue)."""

    id: int
    head_ref: str
    head_sha: str
    base_ref: str
    base_sha: str
    merged: bool = False
    merged_at: datetime | None = None
    merge_commit_sha: str | None = None
    draft: bool = False


@dataclass
class Issue:
    id: int
    number: int
    title: str
    body: str | None
    user: User
    created_at: datetime
    updated_at: datetime
    state: str = "open"
    state_reason: str | None = None
    closed_at: datetime | None = None
    closed_by: User | None = None
    labels: list[Label] = field(default_factory=list)
    assignees: list[User] = field(default_factory=list)
    locked: bool = False
    comments: int = 0
    reactions: list[Reaction] = field(default_factory=list)
    pull: PullInfo | None = None


@dataclass
class Comment:
    id: int
    issue_number: int
    body: str
    user: User
    created_at: datetime
    updated_at: datetime
    reactions: list[Reaction] = field(default_factory=list)


@dataclass
class CommitStatus:
    id: int
    sha: str
    state: str
    context: str
    description: str | None
    target_url: str | None
    creator: User
    created_at: datetime
    updated_at: datetime


@dataclass
class CheckRun:
    id: int
    head_sha: str
    name: str
    app_id: int
    status: str = "queued"
    conclusion: str | None = None
    started_at: datetime | None = None
    completed_at: datetime | None = None
    details_url: str | None = None
    external_id: str | None = None
    output: dict = field(default_factory=dict)
    annotations: list = field(default_factory=list)  # every update's output.annotations, appended as GitHub does


@dataclass
class Dispatch:  # a workflow_dispatch the double received: what a self-hosted runner would be given
    workflow: str  # the workflow's file name
    ref: str
    inputs: dict
    actor: User
    created_at: datetime


@dataclass
class Artifact:
    id: int
    name: str
    data: bytes  # the zip served by the download address
    created_at: datetime
    expired: bool = False
    size_in_bytes: int | None = None  # None: the zip's real size (a test may make the listing lie)


@dataclass
class WorkflowRun:
    id: int
    workflow: str  # file name, e.g. perfbot-bench.yml
    title: str  # display_title, from the workflow's run-name
    head_branch: str
    head_sha: str
    actor: User
    created_at: datetime
    event: str = "workflow_dispatch"
    status: str = "queued"
    conclusion: str | None = None
    run_number: int = 1
    artifacts: list[Artifact] = field(default_factory=list)


@dataclass
class Repo:
    id: int
    owner: User
    name: str
    default_branch: str = "main"
    private: bool = False
    description: str | None = None
    created_at: datetime = field(default_factory=utc_now)
    labels: dict[str, Label] = field(default_factory=dict)  # by lower-case name: GitHub matches them so
    issues: dict[int, Issue] = field(default_factory=dict)  # issues and pull requests, by number
    comments: dict[int, Comment] = field(default_factory=dict)
    review_comments: dict[int, Comment] = field(default_factory=dict)  # on a pull request's diff
    contents: dict[tuple[str, str], bytes] = field(default_factory=dict)  # (branch, path) -> bytes
    branches: dict[str, str] = field(default_factory=dict)  # branch -> head sha
    commits: dict[str, str] = field(default_factory=dict)  # sha -> message
    statuses: list[CommitStatus] = field(default_factory=list)
    check_runs: dict[int, CheckRun] = field(default_factory=dict)
    permissions: dict[str, str] = field(default_factory=dict)  # lower-case login -> role
    workflows: dict[str, int] = field(default_factory=dict)  # workflow file name -> id
    dispatches: list[Dispatch] = field(default_factory=list)
    workflow_runs: dict[int, WorkflowRun] = field(default_factory=dict)
    numbers: itertools.count = field(default_factory=lambda: itertools.count(1))

    @property
    def full_name(self) -> str:
        return f"{self.owner.login}/{self.name}"

    def label(self, name: str) -> Label | None:
        return self.labels.get(name.lower())

    def resolve(self, ref: str | None) -> str | None:
        """A branch name or a known commit sha -> commit sha; None for anything else."""
        ref = ref or self.default_branch
        ref = ref.removeprefix("refs/heads/").removeprefix("heads/")
        if ref in self.branches:
            return self.branches[ref]
        return ref if ref in self.commits else None


@dataclass
class Installation:
    id: int
    app_id: int
    app_slug: str
    account: User
    public_key: object  # a `cryptography` public key; JWTs for this app must verify with it
    repositories: frozenset[str]  # lower-case "owner/name"
    token_ttl_seconds: int = 3600
    created_at: datetime = field(default_factory=utc_now)


class State:
    """Everything the double knows. Callers hold `lock` while they read or change it."""

    def __init__(self) -> None:
        self.lock = threading.RLock()
        self._ids = itertools.count(1001)
        self.users: dict[str, User] = {}
        self.tokens: dict[str, Identity] = {}
        self.repos: dict[str, Repo] = {}  # by lower-case "owner/name"
        self.installations: dict[int, Installation] = {}
        self.rate_used: dict[tuple[str, str], int] = {}  # (who, resource) -> requests in this window
        self.rate_reset = int(time.time()) + 3600
        # Optional real git remotes ({root}/{owner}/{repo}.git): branches pushed there exist for pull requests.
        self.git_remotes = None
        self.downloads: dict[str, bytes] = {}  # signed-URL token -> artifact zip, served outside the API
        self.app_hook = None  # routes_hooks.AppHook: where the App's webhook deliveries go
        self.hook_deliveries: list = []  # routes_hooks.HookDelivery, every attempt in order

    def count_request(self, who: str, resource: str) -> tuple[int, int, int, int]:
        """Count one request against `who`'s budget: (limit, remaining, reset epoch, used)."""
        if time.time() >= self.rate_reset:
            self.rate_used.clear()
            self.rate_reset = int(time.time()) + 3600
        used = self.rate_used[who, resource] = self.rate_used.get((who, resource), 0) + 1
        limit = RATE_LIMITS[resource]
        return limit, max(limit - used, 0), self.rate_reset, used

    def next_id(self) -> int:
        return next(self._ids)

    def user(self, login: str, kind: str = "User") -> User:
        """The user with this login, created on first mention (GitHub's users all exist already)."""
        found = self.users.get(login.lower())
        if found is None:
            found = self.users[login.lower()] = User(login, self.next_id(), kind)
        return found

    def repo(self, owner: str, name: str) -> Repo | None:
        return self.repos.get(f"{owner}/{name}".lower())

    def add_repo(self, full_name: str, *, default_branch: str = "main", private: bool = False,
                 description: str | None = None, owner_type: str = "Organization") -> Repo:
        owner_login, _, name = full_name.partition("/")
        if not name or "/" in name:
            raise ValueError(f"repository name must be 'owner/name', not {full_name!r}")
        if full_name.lower() in self.repos:
            raise ValueError(f"repository {full_name} already exists in the double")
        repo = Repo(self.next_id(), self.user(owner_login, owner_type), name, default_branch, private, description)
        head = blob_sha(f"{full_name}@{default_branch}".encode())  # a stable, sha-shaped commit id
        repo.branches[default_branch] = head
        repo.commits[head] = "Initial commit"
        self.repos[full_name.lower()] = repo
        return repo

    def repo_or_raise(self, full_name: str) -> Repo:
        owner, _, name = full_name.partition("/")
        repo = self.repo(owner, name)
        if repo is None:
            raise KeyError(f"no repository {full_name} in the double: add it with add_repo() first")
        return repo
