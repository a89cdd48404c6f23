"""Opening pull requests: the head and base branches must exist, as on GitHub.

Branches are the double's own (seeded with `add_pull`) or, when `use_git_remotes(root)` was called,
branches of the real git repository `{root}/{owner}/{repo}.git` that a bot pushed to.
"""
from __future__ import annotations

import subprocess

from .routes_checks import pull_json
from .routes_common import ApiError, Call, Reply, route, validation_failed
from .state import Issue, PullInfo, Repo, utc_now


def _branch_sha(call: Call, repo: Repo, branch: str) -> str | None:
    if branch in repo.branches:
        return repo.branches[branch]
    root = call.state.git_remotes
    if root is None:
        return None
    done = subprocess.run(["git", "-C", str(root / f"{repo.full_name}.git"), "rev-parse", "--verify", "--quiet",
                           "--end-of-options", f"refs/heads/{branch}"], capture_output=True, text=True, timeout=10)
    return done.stdout.strip() or None


@route("POST", "/repos/{owner}/{repo}/pulls")
def create_pull(call: Call) -> Reply:
    repo = call.repo()
    head, base = str(call.field("head", "")), str(call.field("base", ""))
    head_ref = head.split(":", 1)[-1]
    head_sha, base_sha = _branch_sha(call, repo, head_ref), _branch_sha(call, repo, base)
    if head_sha is None:
        raise validation_failed("PullRequest", "head", "invalid")
    if base_sha is None:
        raise validation_failed("PullRequest", "base", "invalid")
    for issue in repo.issues.values():
        if issue.pull and issue.state == "open" and issue.pull.head_ref == head_ref:
            raise ApiError(422, "Validation Failed", [{"resource": "PullRequest", "code": "custom",
                                                       "message": "A pull request already exists for "
                                                                  f"{repo.owner.login}:{head_ref}."}])
    now = utc_now()
    issue = Issue(call.state.next_id(), next(repo.numbers), str(call.field("title", "")), call.long_text("PullRequest"),
                  call.actor(), now, now)
    issue.pull = PullInfo(call.state.next_id(), head_ref, head_sha, base, base_sha, draft=bool(call.field("draft")))
    repo.branches.setdefault(head_ref, head_sha)
    repo.commits.setdefault(head_sha, issue.title)
    repo.issues[issue.number] = issue
    return Reply(201, pull_json(call, repo, issue), {"Location": f"{call.repo_url(repo)}/pulls/{issue.number}"})


@route("PUT", "/repos/{owner}/{repo}/pulls/{pull_number}/merge")
def merge_pull(call: Call) -> Reply:
    """Merge as GitHub does: 405 unless open and not merged, 409 when `sha` is not the head any more. The git
    remote is not written: the push that follows a real merge is the test's to simulate."""
    from .routes_checks import _find_pull
    from .state import blob_sha

    repo = call.repo()
    issue = _find_pull(call, repo)
    if issue.state != "open" or issue.pull.merged:
        raise ApiError(405, "Pull Request is not mergeable")
    sha = call.field("sha")
    if sha is not None and sha != issue.pull.head_sha:
        raise ApiError(409, "Head branch was modified. Review and try the merge again.")
    now = utc_now()
    issue.pull.merged, issue.pull.merged_at = True, now
    issue.pull.merge_commit_sha = blob_sha(f"merge {issue.pull.head_sha}".encode())
    issue.state, issue.closed_at, issue.updated_at = "closed", now, now
    return Reply(200, {"sha": issue.pull.merge_commit_sha, "merged": True,
                       "message": "Pull Request successfully merged"})
