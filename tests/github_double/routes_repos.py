"""Repositories, their files (contents API), collaborator permissions, labels, and users.

Shapes follow GitHub's `full-repository`, `content-file`, `repository-collaborator-permission` and `label`
schemas, including the templated `*_url` fields PyGithub stores.
"""
from __future__ import annotations

import base64
import re
from typing import Any
from urllib.parse import quote

from .routes_common import ApiError, Call, Reply, label_json, not_found, paginate, route, user_json, validation_failed
from .state import PERMISSION_OF_ROLE, Label, Repo, blob_sha, iso, node_id

# (field, path below the repository URL) for the link fields every repository object carries
_REPO_LINKS = [
    ("archive_url", "/{archive_format}{/ref}"), ("assignees_url", "/assignees{/user}"),
    ("blobs_url", "/git/blobs{/sha}"), ("branches_url", "/branches{/branch}"),
    ("collaborators_url", "/collaborators{/collaborator}"), ("comments_url", "/comments{/number}"),
    ("commits_url", "/commits{/sha}"), ("compare_url", "/compare/{base}...{head}"),
    ("contents_url", "/contents/{+path}"), ("contributors_url", "/contributors"),
    ("deployments_url", "/deployments"), ("downloads_url", "/downloads"), ("events_url", "/events"),
    ("forks_url", "/forks"), ("git_commits_url", "/git/commits{/sha}"), ("git_refs_url", "/git/refs{/sha}"),
    ("git_tags_url", "/git/tags{/sha}"), ("hooks_url", "/hooks"), ("issue_comment_url", "/issues/comments{/number}"),
    ("issue_events_url", "/issues/events{/number}"), ("issues_url", "/issues{/number}"),
    ("keys_url", "/keys{/key_id}"), ("labels_url", "/labels{/name}"), ("languages_url", "/languages"),
    ("merges_url", "/merges"), ("milestones_url", "/milestones{/number}"),
    ("notifications_url", "/notifications{?since,all,participating}"), ("pulls_url", "/pulls{/number}"),
    ("releases_url", "/releases{/id}"), ("stargazers_url", "/stargazers"), ("statuses_url", "/statuses/{sha}"),
    ("subscribers_url", "/subscribers"), ("subscription_url", "/subscription"), ("tags_url", "/tags"),
    ("teams_url", "/teams"), ("trees_url", "/git/trees{/sha}"),
]
_COLOR = re.compile(r"[0-9a-fA-F]{6}")


def repo_json(call: Call, repo: Repo) -> dict[str, Any]:
    """A `full-repository` object (which also satisfies `repository` and `minimal-repository`)."""
    url, html = call.repo_url(repo), call.html_repo_url(repo)
    open_issues = sum(1 for issue in repo.issues.values() if issue.state == "open")
    host = call.web.split("://", 1)[-1]
    fields: dict[str, Any] = {
        "id": repo.id, "node_id": node_id("R", repo.id), "name": repo.name, "full_name": repo.full_name,
        "owner": user_json(call, repo.owner), "private": repo.private,
        "visibility": "private" if repo.private else "public", "html_url": html, "description": repo.description,
        "fork": False, "url": url, "clone_url": f"{html}.git", "git_url": f"git://{host}/{repo.full_name}.git",
        "ssh_url": f"git@{host.split(':')[0]}:{repo.full_name}.git", "svn_url": html, "mirror_url": None,
        "homepage": None, "language": None, "default_branch": repo.default_branch,
        "forks": 0, "forks_count": 0, "stargazers_count": 0, "watchers": 0, "watchers_count": 0,
        "network_count": 0, "subscribers_count": 0, "size": 0, "open_issues": open_issues,
        "open_issues_count": open_issues, "has_issues": True, "has_projects": True, "has_wiki": True,
        "has_pages": False, "has_downloads": True, "has_discussions": False, "archived": False,
        "disabled": False, "is_template": False, "license": None, "topics": [],
        "pushed_at": iso(repo.created_at), "created_at": iso(repo.created_at), "updated_at": iso(repo.created_at),
    }
    fields.update({name: url + suffix for name, suffix in _REPO_LINKS})
    if call.identity is not None and call.identity.installation_id is None:
        role = _role(call, repo, call.identity.user.login)
        fields["permissions"] = {"admin": role == "admin", "maintain": role in ("admin", "maintain"),
                                 "push": role in ("admin", "maintain", "write"),
                                 "triage": role != "read" and role != "none", "pull": role != "none"}
    return fields


def _role(call: Call, repo: Repo, login: str) -> str:
    if login.lower() == repo.owner.login.lower():
        return "admin"
    # GitHub answers "read" for anyone on a public repository who is not a collaborator.
    return repo.permissions.get(login.lower(), "none" if repo.private else "read")


@route("GET", "/repos/{owner}/{repo}")
def get_repo(call: Call) -> Reply:
    return Reply(200, repo_json(call, call.repo()))


@route("GET", "/repos/{owner}/{repo}/contents/{path}")
def get_contents(call: Call) -> Reply:
    repo = call.repo()
    ref = call.query.get("ref") or repo.default_branch
    branch = next((b for b, sha in repo.branches.items() if ref in (b, sha)), ref.removeprefix("refs/heads/"))
    path = call.args["path"].strip("/")
    data = repo.contents.get((branch, path))
    if data is not None:
        return Reply(200, _content_json(call, repo, branch, path, data))
    prefix = f"{path}/" if path else ""
    children = sorted({p[len(prefix):].split("/")[0] for b, p in repo.contents if b == branch and p.startswith(prefix)})
    if not children:
        raise not_found()
    entries = []
    for child in children:
        child_path = prefix + child
        child_data = repo.contents.get((branch, child_path))
        entry = _content_json(call, repo, branch, child_path, child_data or b"")
        del entry["content"], entry["encoding"]
        if child_data is None:
            entry.update(type="dir", size=0, sha=blob_sha(child_path.encode()), download_url=None)
        entries.append(entry)
    return Reply(200, entries)


def _content_json(call: Call, repo: Repo, branch: str, path: str, data: bytes) -> dict[str, Any]:
    sha = blob_sha(data)
    url = f"{call.repo_url(repo)}/contents/{quote(path)}?ref={quote(branch)}"
    html = f"{call.html_repo_url(repo)}/blob/{quote(branch)}/{quote(path)}"
    git = f"{call.repo_url(repo)}/git/blobs/{sha}"
    encoded = base64.b64encode(data).decode()
    return {
        "type": "file", "encoding": "base64", "size": len(data), "name": path.rsplit("/", 1)[-1], "path": path,
        # GitHub wraps the base64 text at 60 characters
        "content": "".join(encoded[i:i + 60] + "\n" for i in range(0, len(encoded), 60)),
        "sha": sha, "url": url, "git_url": git, "html_url": html,
        "download_url": f"{call.web}/raw/{repo.full_name}/{quote(branch)}/{quote(path)}",
        "_links": {"self": url, "git": git, "html": html},
    }


@route("GET", "/repos/{owner}/{repo}/collaborators/{username}/permission")
def get_collaborator_permission(call: Call) -> Reply:
    repo = call.repo()
    user = call.state.user(call.args["username"])
    role = _role(call, repo, user.login)
    collaborator = dict(user_json(call, user), role_name=role)
    return Reply(200, {"permission": PERMISSION_OF_ROLE[role], "role_name": role, "user": collaborator})


@route("GET", "/repos/{owner}/{repo}/labels")
def list_labels(call: Call) -> Reply:
    repo = call.repo()
    return paginate(call, sorted(repo.labels.values(), key=lambda label: label.id), lambda label: label_json(call, repo,
                                                                                                             label))


@route("GET", "/repos/{owner}/{repo}/labels/{name}")
def get_label(call: Call) -> Reply:
    repo = call.repo()
    label = repo.label(call.args["name"])
    if label is None:
        raise not_found()
    return Reply(200, label_json(call, repo, label))


@route("POST", "/repos/{owner}/{repo}/labels")
def create_label(call: Call) -> Reply:
    repo = call.repo()
    call.actor()
    name, color = call.field("name"), (call.field("color") or "ededed").lstrip("#")
    if repo.label(name) is not None:
        raise validation_failed("Label", "name", "already_exists")
    _check_color(color)
    label = add_label(call, repo, name, color, call.field("description"))
    return Reply(201, label_json(call, repo, label))


def add_label(call: Call, repo: Repo, name: str, color: str = "ededed", description: str | None = None) -> Label:
    label = repo.labels[name.lower()] = Label(call.state.next_id(), name, color.lower(), description)
    return label


def _check_color(color: str) -> None:
    if not _COLOR.fullmatch(color):
        raise validation_failed("Label", "color", "invalid")


@route("PATCH", "/repos/{owner}/{repo}/labels/{name}")
def update_label(call: Call) -> Reply:
    repo = call.repo()
    call.actor()
    label = repo.label(call.args["name"])
    if label is None:
        raise not_found()
    new_name = call.field("new_name")
    if new_name and new_name.lower() != label.name.lower() and repo.label(new_name) is not None:
        raise validation_failed("Label", "name", "already_exists")
    if call.field("color") is not None:
        _check_color(call.field("color").lstrip("#"))
        label.color = call.field("color").lstrip("#").lower()
    if "description" in (call.body or {}):
        label.description = call.field("description")
    if new_name:
        del repo.labels[label.name.lower()]
        label.name = new_name
        repo.labels[new_name.lower()] = label
    return Reply(200, label_json(call, repo, label))


@route("DELETE", "/repos/{owner}/{repo}/labels/{name}")
def delete_label(call: Call) -> Reply:
    repo = call.repo()
    call.actor()
    label = repo.labels.pop(call.args["name"].lower(), None)
    if label is None:
        raise not_found()
    for issue in repo.issues.values():  # GitHub takes a deleted label off every issue
        issue.labels = [label for label in issue.labels if label.id != label.id]
    return Reply(204)


@route("GET", "/users/{username}")
def get_user(call: Call) -> Reply:
    user = call.state.users.get(call.args["username"].lower())
    if user is None:
        raise not_found()
    return Reply(200, dict(user_json(call, user), name=None, company=None, blog="", location=None, email=None,
                           hireable=None, bio=None, public_repos=0, public_gists=0, followers=0, following=0,
                           created_at="2020-01-01T00:00:00Z", updated_at="2020-01-01T00:00:00Z"))


@route("GET", "/user")
def get_authenticated_user(call: Call) -> Reply:
    if call.identity is not None and call.identity.installation_id is not None:
        raise ApiError(403, "Resource not accessible by integration")
    call.args["username"] = call.actor().login
    return get_user(call)
