"""GitHub Actions: dispatch a workflow, list and read its runs, list a run's artifacts, and download one.

Shapes follow GitHub's `workflow-run` and `artifact` schemas. A download answers 302 with a signed address
outside the API (`/_artifacts/<token>`, served by the server module like blob storage), as GitHub does.
"""
from __future__ import annotations

import secrets
from typing import Any

from .routes_common import ApiError, Call, Reply, not_found, paginate, route, user_json, validation_failed
from .state import Artifact, Dispatch, Repo, WorkflowRun, iso, node_id, parse_iso, utc_now

DOWNLOAD_PREFIX = "/_artifacts/"


def _workflow(call: Call, repo: Repo) -> tuple[str, int]:
    wanted = call.args["workflow_id"]
    for name, workflow_id in repo.workflows.items():
        if wanted in (name, str(workflow_id)):
            return name, workflow_id
    raise not_found()


def _minimal_repo(call: Call, repo: Repo) -> dict[str, Any]:
    url = call.repo_url(repo)
    return {"id": repo.id, "node_id": node_id("R", repo.id), "name": repo.name, "full_name": repo.full_name,
            "owner": user_json(call, repo.owner), "private": repo.private, "html_url": call.html_repo_url(repo),
            "description": repo.description, "fork": False, "url": url, **{
                f"{name}_url": f"{url}/{name}" for name in (
                    "archive", "assignees", "blobs", "branches", "collaborators", "comments", "commits", "compare",
                    "contents", "contributors", "deployments", "downloads", "events", "forks", "git_commits",
                    "git_refs", "git_tags", "hooks", "issue_comment", "issue_events", "issues", "keys", "labels",
                    "languages", "merges", "milestones", "notifications", "pulls", "releases", "stargazers",
                    "statuses", "subscribers", "subscription", "tags", "teams", "trees")}}


def workflow_run_json(call: Call, repo: Repo, run: WorkflowRun) -> dict[str, Any]:
    url = f"{call.repo_url(repo)}/actions/runs/{run.id}"
    workflow_id = repo.workflows.get(run.workflow, 0)
    return {
        "id": run.id, "name": "perfbot bench", "node_id": node_id("WFR", run.id), "check_suite_id": run.id,
        "check_suite_node_id": node_id("CS", run.id), "head_branch": run.head_branch, "head_sha": run.head_sha,
        "path": f".github/workflows/{run.workflow}", "display_title": run.title, "run_number": run.run_number,
        "run_attempt": 1, "referenced_workflows": [], "event": run.event, "status": run.status,
        "conclusion": run.conclusion, "workflow_id": workflow_id, "url": url,
        "html_url": f"{call.html_repo_url(repo)}/actions/runs/{run.id}", "pull_requests": [],
        "created_at": iso(run.created_at), "updated_at": iso(run.created_at), "run_started_at": iso(run.created_at),
        "actor": user_json(call, run.actor), "triggering_actor": user_json(call, run.actor),
        "jobs_url": f"{url}/jobs", "logs_url": f"{url}/logs",
        "check_suite_url": f"{call.repo_url(repo)}/check-suites/{run.id}",
        "artifacts_url": f"{url}/artifacts", "cancel_url": f"{url}/cancel", "rerun_url": f"{url}/rerun",
        "previous_attempt_url": None, "workflow_url": f"{call.repo_url(repo)}/actions/workflows/{workflow_id}",
        "head_commit": {"id": run.head_sha, "tree_id": run.head_sha, "message": "perfbot bench",
                        "timestamp": iso(run.created_at), "author": None, "committer": None},
        "repository": _minimal_repo(call, repo), "head_repository": _minimal_repo(call, repo),
    }


def artifact_json(call: Call, repo: Repo, run: WorkflowRun, artifact: Artifact) -> dict[str, Any]:
    url = f"{call.repo_url(repo)}/actions/artifacts/{artifact.id}"
    size = artifact.size_in_bytes if artifact.size_in_bytes is not None else len(artifact.data)
    return {"id": artifact.id, "node_id": node_id("MDg", artifact.id), "name": artifact.name, "size_in_bytes": size,
            "url": url, "archive_download_url": f"{url}/zip", "expired": artifact.expired,
            "created_at": iso(artifact.created_at), "updated_at": iso(artifact.created_at),
            "expires_at": iso(artifact.created_at), "digest": None,
            "workflow_run": {"id": run.id, "repository_id": repo.id, "head_repository_id": repo.id,
                             "head_branch": run.head_branch, "head_sha": run.head_sha}}


@route("POST", "/repos/{owner}/{repo}/actions/workflows/{workflow_id}/dispatches")
def create_dispatch(call: Call) -> Reply:
    repo = call.repo()
    name, _ = _workflow(call, repo)
    ref = call.field("ref")
    if repo.resolve(ref) is None or ref not in repo.branches:
        raise ApiError(422, f"No ref found for: {ref}")
    inputs = call.field("inputs") or {}
    if sum(len(str(v)) for v in inputs.values()) > 65535:
        raise validation_failed("Workflow", "inputs", "invalid", "inputs are too large")
    repo.dispatches.append(Dispatch(name, ref, dict(inputs), call.actor(), utc_now()))
    return Reply(204)


@route("GET", "/repos/{owner}/{repo}/actions/workflows/{workflow_id}/runs")
def list_workflow_runs(call: Call) -> Reply:
    repo = call.repo()
    name, _ = _workflow(call, repo)
    runs = [r for r in repo.workflow_runs.values() if r.workflow == name]
    if "event" in call.query:
        runs = [r for r in runs if r.event == call.query["event"]]
    created = call.query.get("created", "")
    if created.startswith(">="):  # the one form of GitHub's date ranges perfbot uses
        since = parse_iso(created[2:])
        runs = [r for r in runs if r.created_at >= since]
    runs.sort(key=lambda r: r.id, reverse=True)  # newest first, as GitHub lists them
    return paginate(call, runs, lambda r: workflow_run_json(call, repo, r),
                    lambda page, total: {"total_count": total, "workflow_runs": page})


def _run(call: Call, repo: Repo) -> WorkflowRun:
    run = repo.workflow_runs.get(call.int_arg("run_id"))
    if run is None:
        raise not_found()
    return run


@route("GET", "/repos/{owner}/{repo}/actions/runs/{run_id}")
def get_workflow_run(call: Call) -> Reply:
    repo = call.repo()
    return Reply(200, workflow_run_json(call, repo, _run(call, repo)))


@route("GET", "/repos/{owner}/{repo}/actions/runs/{run_id}/artifacts")
def list_run_artifacts(call: Call) -> Reply:
    repo = call.repo()
    run = _run(call, repo)
    artifacts = [a for a in run.artifacts if "name" not in call.query or a.name == call.query["name"]]
    return paginate(call, artifacts, lambda a: artifact_json(call, repo, run, a),
                    lambda page, total: {"total_count": total, "artifacts": page})


@route("GET", "/repos/{owner}/{repo}/actions/artifacts/{artifact_id}/{archive_format}")
def download_artifact(call: Call) -> Reply:
    repo = call.repo()
    wanted = call.int_arg("artifact_id")
    found = next((a for r in repo.workflow_runs.values() for a in r.artifacts if a.id == wanted), None)
    if found is None or call.args["archive_format"] != "zip":
        raise not_found()
    if found.expired:
        raise ApiError(410, "Artifact has expired")
    token = secrets.token_urlsafe(16)
    call.state.downloads[token] = found.data
    return Reply(302, None, {"Location": f"{call.web}{DOWNLOAD_PREFIX}{token}"})
