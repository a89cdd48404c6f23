"""Pull requests, commits, commit statuses and check runs: what a bot reports its verdicts on.

Commits are known by sha (the heads of branches and the head/base shas of added pull requests); an
unknown sha answers 422 "No commit found for SHA", as GitHub does. Check runs, as on GitHub, can only be
written with a GitHub App installation token.
"""
from __future__ import annotations

from typing import Any

from .routes_apps import integration_json
from .routes_common import ApiError, Call, Reply, not_found, paginate, route, user_json
from .routes_issues import issue_json
from .routes_repos import repo_json
from .state import CheckRun, CommitStatus, Issue, Repo, iso, node_id, parse_iso, utc_now

_STATUS_RANK = {"error": 0, "failure": 0, "pending": 1, "success": 2}


def _known_sha(repo: Repo, ref: str) -> str:
    sha = repo.resolve(ref)
    if sha is None:
        raise ApiError(422, f"No commit found for SHA: {ref}")
    return sha


def pull_json(call: Call, repo: Repo, issue: Issue) -> dict[str, Any]:
    pull, url = issue.pull, f"{call.repo_url(repo)}/pulls/{issue.number}"
    data = issue_json(call, repo, issue)
    html, issue_url = data["html_url"], data["url"]

    def side(ref: str, sha: str) -> dict[str, Any]:
        return {"label": f"{repo.owner.login}:{ref}", "ref": ref, "sha": sha, "user": user_json(call, repo.owner),
                "repo": repo_json(call, repo)}

    links = {"self": url, "html": html, "issue": issue_url, "comments": f"{issue_url}/comments",
             "review_comments": f"{url}/comments", "review_comment": f"{call.repo_url(repo)}/pulls/comments{{/number}}",
             "commits": f"{url}/commits", "statuses": f"{call.repo_url(repo)}/statuses/{pull.head_sha}"}
    for name in ("id", "node_id", "assignees", "pull_request", "reactions", "comments_url", "events_url",
                 "labels_url", "repository_url", "timeline_url", "closed_by", "state_reason"):
        data.pop(name, None)
    data.update({
        "id": pull.id, "node_id": node_id("PR", pull.id), "url": url, "issue_url": issue_url,
        "diff_url": f"{html}.diff", "patch_url": f"{html}.patch", "commits_url": f"{url}/commits",
        "review_comments_url": f"{url}/comments", "review_comment_url": links["review_comment"],
        "comments_url": f"{issue_url}/comments", "statuses_url": links["statuses"],
        "head": side(pull.head_ref, pull.head_sha), "base": side(pull.base_ref, pull.base_sha),
        "_links": {name: {"href": href} for name, href in links.items()},
        "assignees": [user_json(call, user) for user in issue.assignees], "requested_reviewers": [],
        "requested_teams": [], "merged": pull.merged, "merged_at": iso(pull.merged_at), "merged_by": None,
        "merge_commit_sha": pull.merge_commit_sha, "mergeable": None if pull.merged else True,
        "mergeable_state": "clean", "rebaseable": True, "auto_merge": None, "draft": pull.draft,
        "maintainer_can_modify": False, "commits": 1, "additions": 0, "deletions": 0, "changed_files": 0,
        "review_comments": 0,
    })
    return data


def _find_pull(call: Call, repo: Repo) -> Issue:
    issue = repo.issues.get(call.int_arg("pull_number"))
    if issue is None or issue.pull is None:
        raise not_found()
    return issue


@route("GET", "/repos/{owner}/{repo}/pulls/{pull_number}")
def get_pull(call: Call) -> Reply:
    repo = call.repo()
    return Reply(200, pull_json(call, repo, _find_pull(call, repo)))


@route("GET", "/repos/{owner}/{repo}/pulls")
def list_pulls(call: Call) -> Reply:
    repo = call.repo()
    state, head, base = call.query.get("state", "open"), call.query.get("head"), call.query.get("base")
    pulls = [issue for issue in repo.issues.values() if issue.pull and (state == "all" or issue.state == state)
             and (not base or issue.pull.base_ref == base)
             and (not head or f"{repo.owner.login}:{issue.pull.head_ref}".lower() == head.lower())]
    pulls.sort(key=lambda issue: issue.number, reverse=call.query.get("direction", "desc") == "desc")
    return paginate(call, pulls, lambda issue: pull_json(call, repo, issue))


@route("GET", "/repos/{owner}/{repo}/commits/{ref}")
def get_commit(call: Call) -> Reply:
    repo = call.repo()
    sha = _known_sha(repo, call.args["ref"])
    url, html = f"{call.repo_url(repo)}/commits/{sha}", f"{call.html_repo_url(repo)}/commit/{sha}"
    person = {"name": repo.owner.login, "email": f"{repo.owner.login}@users.noreply.example",
              "date": iso(repo.created_at)}
    tree = {"sha": sha, "url": f"{call.repo_url(repo)}/git/trees/{sha}"}
    return Reply(200, {
        "sha": sha, "node_id": node_id("C", int(sha[:8], 16)), "url": url, "html_url": html,
        "comments_url": f"{url}/comments", "author": user_json(call, repo.owner),
        "committer": user_json(call, repo.owner), "parents": [], "files": [],
        "stats": {"additions": 0, "deletions": 0, "total": 0},
        "commit": {"url": f"{call.repo_url(repo)}/git/commits/{sha}", "author": person, "committer": person,
                   "message": repo.commits.get(sha, ""), "comment_count": 0, "tree": tree},
    })


def status_json(call: Call, repo: Repo, status: CommitStatus) -> dict[str, Any]:
    return {"url": f"{call.repo_url(repo)}/statuses/{status.sha}",
            "avatar_url": user_json(call, status.creator)["avatar_url"],
            "id": status.id, "node_id": node_id("SC", status.id), "state": status.state,
            "description": status.description, "target_url": status.target_url, "context": status.context,
            "created_at": iso(status.created_at), "updated_at": iso(status.updated_at),
            "creator": user_json(call, status.creator)}


@route("POST", "/repos/{owner}/{repo}/statuses/{sha}")
def create_status(call: Call) -> Reply:
    repo = call.repo()
    sha, now = _known_sha(repo, call.args["sha"]), utc_now()
    status = CommitStatus(call.state.next_id(), sha, call.field("state"), call.field("context") or "default",
                          call.field("description"), call.field("target_url"), call.actor(), now, now)
    repo.statuses.append(status)
    return Reply(201, status_json(call, repo, status))


@route("GET", "/repos/{owner}/{repo}/commits/{ref}/statuses")
def list_statuses(call: Call) -> Reply:
    repo = call.repo()
    sha = _known_sha(repo, call.args["ref"])
    statuses = [s for s in reversed(repo.statuses) if s.sha == sha]  # newest first
    return paginate(call, statuses, lambda s: status_json(call, repo, s))


@route("GET", "/repos/{owner}/{repo}/commits/{ref}/status")
def combined_status(call: Call) -> Reply:
    repo = call.repo()
    sha = _known_sha(repo, call.args["ref"])
    latest: dict[str, CommitStatus] = {}
    for status in repo.statuses:  # the latest status of each context counts
        if status.sha == sha:
            latest[status.context] = status
    states = [s.state for s in latest.values()]
    overall = min(states, key=_STATUS_RANK.__getitem__) if states else "pending"
    overall = "failure" if overall == "error" else overall
    statuses = [dict(status_json(call, repo, s), required=False) for s in latest.values()]
    for entry in statuses:
        del entry["creator"]
    return Reply(200, {"state": overall, "statuses": statuses, "sha": sha, "total_count": len(statuses),
                       "repository": repo_json(call, repo), "commit_url": f"{call.repo_url(repo)}/commits/{sha}",
                       "url": f"{call.repo_url(repo)}/commits/{sha}/status"})


def check_run_json(call: Call, repo: Repo, run: CheckRun) -> dict[str, Any]:
    url = f"{call.repo_url(repo)}/check-runs/{run.id}"
    output = {"title": None, "summary": None, "text": None, **run.output}
    output.update(annotations_count=len(run.annotations), annotations_url=f"{url}/annotations")
    output.pop("annotations", None), output.pop("images", None)
    installation = next(i for i in call.state.installations.values() if i.app_id == run.app_id)
    pulls = [{"id": i.pull.id, "number": i.number, "url": f"{call.repo_url(repo)}/pulls/{i.number}",
              "head": {"ref": i.pull.head_ref, "sha": i.pull.head_sha, "repo": _repo_ref(call, repo)},
              "base": {"ref": i.pull.base_ref, "sha": i.pull.base_sha, "repo": _repo_ref(call, repo)}}
             for i in repo.issues.values() if i.pull and i.pull.head_sha == run.head_sha and i.state == "open"]
    return {"id": run.id, "node_id": node_id("CR", run.id), "head_sha": run.head_sha, "external_id": run.external_id,
            "url": url, "html_url": f"{call.html_repo_url(repo)}/runs/{run.id}", "details_url": run.details_url,
            "status": run.status, "conclusion": run.conclusion, "started_at": iso(run.started_at),
            "completed_at": iso(run.completed_at), "output": output, "name": run.name,
            "check_suite": {"id": run.id + 1}, "app": integration_json(call, installation), "pull_requests": pulls}


def _repo_ref(call: Call, repo: Repo) -> dict[str, Any]:
    return {"id": repo.id, "url": call.repo_url(repo), "name": repo.name}


def _app_id(call: Call) -> int:
    identity = call.identity
    if identity is None or identity.installation_id is None:
        raise ApiError(403, "You must authenticate via a GitHub App.")
    return call.state.installations[identity.installation_id].app_id


def _apply_check_fields(call: Call, run: CheckRun) -> None:
    body = call.body or {}
    for name in ("name", "status", "conclusion", "details_url", "external_id"):
        if name in body:
            setattr(run, name, body[name])
    for name in ("started_at", "completed_at"):
        if body.get(name):
            setattr(run, name, parse_iso(body[name]))
    if "output" in body:
        run.output = dict(body["output"])
        run.annotations += run.output.pop("annotations", None) or []
    if run.conclusion is not None:  # GitHub completes a run that is given a conclusion
        run.status = "completed"
    if run.status == "completed" and run.completed_at is None:
        run.completed_at = utc_now()
    if run.status != "queued" and run.started_at is None:
        run.started_at = utc_now()


@route("POST", "/repos/{owner}/{repo}/check-runs")
def create_check_run(call: Call) -> Reply:
    repo = call.repo()
    run = CheckRun(call.state.next_id(), _known_sha(repo, call.field("head_sha")), call.field("name"), _app_id(call))
    _apply_check_fields(call, run)
    repo.check_runs[run.id] = run
    return Reply(201, check_run_json(call, repo, run))


def _find_check_run(call: Call, repo: Repo) -> CheckRun:
    run = repo.check_runs.get(call.int_arg("check_run_id"))
    if run is None:
        raise not_found()
    return run


@route("PATCH", "/repos/{owner}/{repo}/check-runs/{check_run_id}")
def update_check_run(call: Call) -> Reply:
    repo = call.repo()
    run = _find_check_run(call, repo)
    if _app_id(call) != run.app_id:
        raise ApiError(403, f"Invalid app_id `{_app_id(call)}` - check run can only be modified by its creator.")
    _apply_check_fields(call, run)
    return Reply(200, check_run_json(call, repo, run))


@route("GET", "/repos/{owner}/{repo}/check-runs/{check_run_id}")
def get_check_run(call: Call) -> Reply:
    repo = call.repo()
    return Reply(200, check_run_json(call, repo, _find_check_run(call, repo)))


@route("GET", "/repos/{owner}/{repo}/check-runs/{check_run_id}/annotations")
def list_annotations(call: Call) -> Reply:
    repo = call.repo()
    run = _find_check_run(call, repo)
    blob = f"{call.html_repo_url(repo)}/blob/{run.head_sha}"
    return paginate(call, run.annotations, lambda a: {
        "path": a["path"], "blob_href": f"{blob}/{a['path']}", "start_line": a["start_line"],
        "end_line": a["end_line"], "start_column": a.get("start_column"), "end_column": a.get("end_column"),
        "annotation_level": a["annotation_level"], "title": a.get("title"), "message": a["message"],
        "raw_details": a.get("raw_details")})


@route("GET", "/repos/{owner}/{repo}/commits/{ref}/check-runs")
def list_check_runs(call: Call) -> Reply:
    repo = call.repo()
    sha = _known_sha(repo, call.args["ref"])
    name, status = call.query.get("check_name"), call.query.get("status")
    runs = [r for r in repo.check_runs.values() if r.head_sha == sha and (not name or r.name == name)
            and (not status or r.status == status)]
    return paginate(call, sorted(runs, key=lambda r: -r.id), lambda r: check_run_json(call, repo, r),
                    wrap=lambda page, total: {"total_count": total, "check_runs": page})
