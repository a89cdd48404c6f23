"""Issues: create, read, list (with GitHub's filters and pagination), edit, close/reopen, and their labels.

As on GitHub, pull requests are issues too: they share the numbering, show up in the issues list with a
`pull_request` key, and take issue comments and labels through these endpoints.
"""
from __future__ import annotations

from typing import Any

from .routes_common import (
    ApiError,
    Call,
    Reply,
    author_association,
    label_json,
    not_found,
    paginate,
    reactions_rollup,
    route,
    user_json,
)
from .routes_repos import add_label
from .state import Issue, Label, Repo, iso, node_id, parse_iso, utc_now


def issue_json(call: Call, repo: Repo, issue: Issue) -> dict[str, Any]:
    """An `issue` object; with `pull_request` links when the issue is a pull request."""
    url = f"{call.repo_url(repo)}/issues/{issue.number}"
    html = f"{call.html_repo_url(repo)}/{'pull' if issue.pull else 'issues'}/{issue.number}"
    data: dict[str, Any] = {
        "id": issue.id, "node_id": node_id("I", issue.id), "url": url, "repository_url": call.repo_url(repo),
        "labels_url": f"{url}/labels{{/name}}", "comments_url": f"{url}/comments", "events_url": f"{url}/events",
        "timeline_url": f"{url}/timeline", "html_url": html, "number": issue.number, "state": issue.state,
        "state_reason": issue.state_reason, "title": issue.title, "body": issue.body,
        "user": user_json(call, issue.user), "labels": [label_json(call, repo, label) for label in issue.labels],
        "assignee": user_json(call, issue.assignees[0]) if issue.assignees else None,
        "assignees": [user_json(call, user) for user in issue.assignees], "milestone": None,
        "locked": issue.locked, "active_lock_reason": None, "comments": issue.comments,
        "closed_at": iso(issue.closed_at), "created_at": iso(issue.created_at), "updated_at": iso(issue.updated_at),
        "closed_by": user_json(call, issue.closed_by), "author_association": author_association(repo, issue.user),
        "reactions": reactions_rollup(f"{url}/reactions", issue.reactions),
    }
    if issue.pull:
        pulls = f"{call.repo_url(repo)}/pulls/{issue.number}"
        data["draft"] = issue.pull.draft
        data["pull_request"] = {"url": pulls, "html_url": html, "diff_url": f"{html}.diff",
                                "patch_url": f"{html}.patch", "merged_at": iso(issue.pull.merged_at)}
    return data


def find_issue(call: Call, repo: Repo) -> Issue:
    issue = repo.issues.get(call.int_arg("issue_number"))
    if issue is None:
        raise not_found()
    return issue


@route("GET", "/repos/{owner}/{repo}/issues")
def list_issues(call: Call) -> Reply:
    repo = call.repo()
    query = call.query
    state = query.get("state", "open")
    wanted_labels = {name.strip().lower() for name in query.get("labels", "").split(",") if name.strip()}
    creator, assignee = query.get("creator"), query.get("assignee")
    since = parse_iso(query["since"]) if query.get("since") else None
    issues = []
    for issue in repo.issues.values():
        if state != "all" and issue.state != state:
            continue
        if not wanted_labels <= {label.name.lower() for label in issue.labels}:
            continue
        if creator and issue.user.login.lower() != creator.lower():
            continue
        if assignee and not _assignee_matches(issue, assignee):
            continue
        if since and issue.updated_at < since:
            continue
        issues.append(issue)
    sort_key = {"created": lambda i: (i.created_at, i.id), "updated": lambda i: (i.updated_at, i.id),
                "comments": lambda i: (i.comments, i.id)}[query.get("sort", "created")]
    issues.sort(key=sort_key, reverse=query.get("direction", "desc") == "desc")
    return paginate(call, issues, lambda issue: issue_json(call, repo, issue))


def _assignee_matches(issue: Issue, wanted: str) -> bool:
    if wanted == "none":
        return not issue.assignees
    if wanted == "*":
        return bool(issue.assignees)
    return any(user.login.lower() == wanted.lower() for user in issue.assignees)


@route("POST", "/repos/{owner}/{repo}/issues")
def create_issue(call: Call) -> Reply:
    repo = call.repo()
    now = utc_now()
    issue = Issue(call.state.next_id(), next(repo.numbers), str(call.field("title")), call.long_text("Issue"),
                  call.actor(), now, now)
    _apply_people_and_labels(call, repo, issue)
    repo.issues[issue.number] = issue
    return Reply(201, issue_json(call, repo, issue), {"Location": f"{call.repo_url(repo)}/issues/{issue.number}"})


@route("GET", "/repos/{owner}/{repo}/issues/{issue_number}")
def get_issue(call: Call) -> Reply:
    repo = call.repo()
    return Reply(200, issue_json(call, repo, find_issue(call, repo)))


@route("PATCH", "/repos/{owner}/{repo}/issues/{issue_number}")
def update_issue(call: Call) -> Reply:
    repo = call.repo()
    issue = find_issue(call, repo)
    actor = call.actor()
    body = call.body or {}
    if "title" in body:
        issue.title = str(body["title"])
    if "body" in body:
        issue.body = call.long_text("Issue")
    _apply_people_and_labels(call, repo, issue)
    state, reason = body.get("state"), body.get("state_reason")
    now = utc_now()
    if state == "closed" and issue.state != "closed":
        issue.state, issue.closed_at, issue.closed_by = "closed", now, actor
        issue.state_reason = reason or "completed"
    elif state == "open" and issue.state != "open":
        issue.state, issue.closed_at, issue.closed_by = "open", None, None
        issue.state_reason = "reopened"
    elif "state_reason" in body:
        issue.state_reason = reason
    issue.updated_at = now
    return Reply(200, issue_json(call, repo, issue))


def _apply_people_and_labels(call: Call, repo: Repo, issue: Issue) -> None:
    body = call.body or {}
    if "labels" in body:
        issue.labels = _labels_named(call, repo, _label_names(body["labels"]))
    if "assignees" in body:
        issue.assignees = [call.state.user(login) for login in body["assignees"] or []]
    elif "assignee" in body:
        issue.assignees = [call.state.user(body["assignee"])] if body["assignee"] else []


def _label_names(value: Any) -> list[str]:
    """GitHub accepts names, {"name": ...} objects, a bare string, or any of these under "labels"."""
    if isinstance(value, dict):
        value = value.get("labels", [])
    if isinstance(value, str):
        value = [value]
    return [item["name"] if isinstance(item, dict) else str(item) for item in value or []]


def _labels_named(call: Call, repo: Repo, names: list[str]) -> list[Label]:
    """The labels with these names, in order, without repeats; GitHub creates missing ones (grey)."""
    labels: list[Label] = []
    for name in names:
        label = repo.label(name) or add_label(call, repo, name)
        if label not in labels:
            labels.append(label)
    return labels


def _labels_reply(call: Call, repo: Repo, issue: Issue) -> Reply:
    issue.updated_at = utc_now()
    return Reply(200, [label_json(call, repo, label) for label in issue.labels])


@route("GET", "/repos/{owner}/{repo}/issues/{issue_number}/labels")
def list_issue_labels(call: Call) -> Reply:
    repo = call.repo()
    return paginate(call, find_issue(call, repo).labels, lambda label: label_json(call, repo, label))


@route("POST", "/repos/{owner}/{repo}/issues/{issue_number}/labels")
def add_issue_labels(call: Call) -> Reply:
    repo = call.repo()
    issue = find_issue(call, repo)
    call.actor()
    issue.labels = _labels_named(call, repo, [label.name for label in issue.labels] + _label_names(call.body))
    return _labels_reply(call, repo, issue)


@route("PUT", "/repos/{owner}/{repo}/issues/{issue_number}/labels")
def set_issue_labels(call: Call) -> Reply:
    repo = call.repo()
    issue = find_issue(call, repo)
    call.actor()
    issue.labels = _labels_named(call, repo, _label_names(call.body))
    return _labels_reply(call, repo, issue)


@route("DELETE", "/repos/{owner}/{repo}/issues/{issue_number}/labels")
def remove_all_issue_labels(call: Call) -> Reply:
    repo = call.repo()
    issue = find_issue(call, repo)
    call.actor()
    issue.labels = []
    issue.updated_at = utc_now()
    return Reply(204)


@route("DELETE", "/repos/{owner}/{repo}/issues/{issue_number}/labels/{name}")
def remove_issue_label(call: Call) -> Reply:
    repo = call.repo()
    issue = find_issue(call, repo)
    call.actor()
    remaining = [label for label in issue.labels if label.name.lower() != call.args["name"].lower()]
    if len(remaining) == len(issue.labels):
        raise ApiError(404, "Label does not exist")
    issue.labels = remaining
    return _labels_reply(call, repo, issue)
