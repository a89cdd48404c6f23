"""What every route module shares: the handler registry, the request context, errors and common shapes.

A handler is registered for one documented operation, named exactly as in GitHub's OpenAPI description
(``@route("GET", "/repos/{owner}/{repo}/issues/{issue_number}")``); the server looks handlers up by the
operation the OpenAPI check matched, so a handler for an undocumented path cannot exist. Handlers get a
`Call` and return a `Reply`, or raise `ApiError` for GitHub's error answers.
"""
from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote, urlencode

from werkzeug.datastructures import MultiDict

from .state import Identity, Label, Reaction, Repo, State, User, node_id

DOCS = "https://docs.github.com/rest"
REACTION_CONTENTS = ("+1", "-1", "laugh", "confused", "heart", "hooray", "eyes", "rocket")

HANDLERS: dict[tuple[str, str], Callable[[Call], Reply]] = {}


def route(method: str, template: str) -> Callable:
    """Register the decorated function as the double's implementation of one documented operation."""

    def register(handler: Callable[[Call], Reply]) -> Callable[[Call], Reply]:
        key = (method.upper(), template)
        if key in HANDLERS:
            raise ValueError(f"two handlers for {method} {template}")
        HANDLERS[key] = handler
        return handler

    return register


@dataclass
class Reply:
    status: int = 200
    body: Any = None  # JSON-serialisable; None for an empty body (204)
    headers: dict[str, str] = field(default_factory=dict)


BODY_LIMIT = 65536


class ApiError(Exception):
    """An error answer in GitHub's shape: {"message", "documentation_url", "status"[, "errors"]}."""

    def __init__(self, status: int, message: str, errors: list[dict] | None = None, headers: dict | None = None):
        super().__init__(f"{status} {message}")
        self.status, self.message, self.errors, self.headers = status, message, errors, headers or {}

    def reply(self) -> Reply:
        body: dict[str, Any] = {"message": self.message, "documentation_url": DOCS, "status": str(self.status)}
        if self.errors is not None:
            body["errors"] = self.errors
        return Reply(self.status, body, dict(self.headers))


def not_found() -> ApiError:
    # PyGithub turns a 404 into UnknownObjectException only when the message says "Not Found".
    return ApiError(404, "Not Found")


def validation_failed(resource: str, field_name: str, code: str, message: str | None = None) -> ApiError:
    """GitHub's 422, e.g. creating a label that exists: code "already_exists" on resource "Label"."""
    error = {"resource": resource, "code": code, "field": field_name}
    if message:
        error["message"] = message
    return ApiError(422, "Validation Failed", [error])


@dataclass
class Call:
    """One request, as a handler sees it, with the state it may read and change (under `state.lock`)."""

    state: State
    method: str
    template: str
    args: dict[str, str]  # path variables, decoded
    query: MultiDict
    body: Any  # parsed JSON, or None
    identity: Identity | None
    api: str  # base URL of API links in responses: http://127.0.0.1:PORT or .../api/v3
    web: str  # base URL of html_url links
    path: str  # request path below `api`, for pagination links

    def repo(self) -> Repo:
        """The repository named by {owner}/{repo}; 404 when it is missing or outside the token's reach."""
        repo = self.state.repo(self.args["owner"], self.args["repo"])
        if repo is None or not self.can_see(repo):
            raise not_found()
        return repo

    def can_see(self, repo: Repo) -> bool:
        scope = self.identity.repositories if self.identity else None
        return scope is None or repo.full_name.lower() in scope

    def actor(self) -> User:
        if self.identity is None:
            raise ApiError(401, "Requires authentication")
        return self.identity.user

    def int_arg(self, name: str) -> int:
        return int(self.args[name])  # the OpenAPI check has already rejected non-integers

    def field(self, name: str, default: Any = None) -> Any:
        return self.body.get(name, default) if isinstance(self.body, dict) else default

    def long_text(self, resource: str, name: str = "body") -> Any:
        """A body or comment, refused past GitHub's 65,536 characters as GitHub refuses it (422, code custom)."""
        text = self.field(name)
        if isinstance(text, str) and len(text) > BODY_LIMIT:
            raise validation_failed(resource, name, "custom",
                                    f"{name} is too long (maximum is {BODY_LIMIT} characters)")
        return text

    def repo_url(self, repo: Repo) -> str:
        return f"{self.api}/repos/{repo.full_name}"

    def html_repo_url(self, repo: Repo) -> str:
        return f"{self.web}/{repo.full_name}"


def paginate(call: Call, items: list[Any], render: Callable[[Any], Any],
             wrap: Callable[[list[Any], int], Any] | None = None) -> Reply:
    """One page of `items` (per_page: default 30, at most 100) with GitHub's Link header.

    `wrap(page, total)` builds envelopes such as search's {"total_count", "items"}; plain lists otherwise.
    """
    per_page = min(int(call.query.get("per_page", 30)), 100) or 30
    page = max(int(call.query.get("page", 1)), 1)
    chunk = [render(item) for item in items[(page - 1) * per_page: page * per_page]]
    last = max(math.ceil(len(items) / per_page), 1)
    links = []
    relations = {"prev": page - 1, "next": page + 1, "first": 1, "last": last}
    for rel in ("prev", "next", "last", "first"):  # GitHub's order
        target = relations[rel]
        if (rel in ("prev", "first") and page > 1) or (rel in ("next", "last") and page < last):
            query = [(k, v) for k, v in call.query.items(multi=True) if k != "page"] + [("page", str(target))]
            links.append(f'<{call.api}{call.path}?{urlencode(query)}>; rel="{rel}"')
    headers = {"Link": ", ".join(links)} if links else {}
    return Reply(200, wrap(chunk, len(items)) if wrap else chunk, headers)


def user_json(call: Call, user: User | None) -> dict[str, Any] | None:
    """simple-user: the user object embedded everywhere (login, id, type and GitHub's URL fields)."""
    if user is None:
        return None
    url = f"{call.api}/users/{quote(user.login)}"
    return {
        "login": user.login, "id": user.id, "node_id": node_id("U", user.id),
        "avatar_url": f"{call.web}/avatars/u/{user.id}", "gravatar_id": "", "url": url,
        "html_url": f"{call.web}/{user.login}", "followers_url": f"{url}/followers",
        "following_url": f"{url}/following{{/other_user}}", "gists_url": f"{url}/gists{{/gist_id}}",
        "starred_url": f"{url}/starred{{/owner}}{{/repo}}", "subscriptions_url": f"{url}/subscriptions",
        "organizations_url": f"{url}/orgs", "repos_url": f"{url}/repos", "events_url": f"{url}/events{{/privacy}}",
        "received_events_url": f"{url}/received_events", "type": user.type, "user_view_type": "public",
        "site_admin": False,
    }


def label_json(call: Call, repo: Repo, label: Label) -> dict[str, Any]:
    return {"id": label.id, "node_id": node_id("LA", label.id),
            "url": f"{call.repo_url(repo)}/labels/{quote(label.name, safe='')}", "name": label.name,
            "color": label.color, "description": label.description, "default": label.default}


def reactions_rollup(url: str, reactions: Iterable[Reaction]) -> dict[str, Any]:
    """The `reactions` summary GitHub embeds in issues and comments."""
    counts = {content: 0 for content in REACTION_CONTENTS}
    for reaction in reactions:
        counts[reaction.content] += 1
    return {"url": url, "total_count": sum(counts.values()), **counts}


def author_association(repo: Repo, user: User) -> str:
    if user.login.lower() == repo.owner.login.lower():
        return "OWNER"
    role = repo.permissions.get(user.login.lower(), "none")
    return {"admin": "MEMBER", "maintain": "MEMBER"}.get(role, "COLLABORATOR" if role != "none" else "NONE")
