"""Pull request review comments (comments on a diff line): read one, and react to it, as a bot that takes
commands from them does."""
from __future__ import annotations

from typing import Any

from .routes_comments import _add_reaction
from .routes_common import Call, Reply, author_association, not_found, reactions_rollup, route, user_json
from .state import Comment, Repo, iso, node_id


def review_comment_json(call: Call, repo: Repo, comment: Comment) -> dict[str, Any]:
    url = f"{call.repo_url(repo)}/pulls/comments/{comment.id}"
    html = f"{call.html_repo_url(repo)}/pull/{comment.issue_number}#discussion_r{comment.id}"
    pull_url = f"{call.repo_url(repo)}/pulls/{comment.issue_number}"
    pull = repo.issues[comment.issue_number].pull
    return {
        "url": url, "id": comment.id, "node_id": node_id("PRRC", comment.id), "pull_request_review_id": comment.id,
        "diff_hunk": "@@ -1,1 +1,1 @@", "path": "runtime.c", "position": 1, "original_position": 1,
        "commit_id": pull.head_sha, "original_commit_id": pull.head_sha, "user": user_json(call, comment.user),
        "body": comment.body, "created_at": iso(comment.created_at), "updated_at": iso(comment.updated_at),
        "html_url": html, "pull_request_url": pull_url, "author_association": author_association(repo, comment.user),
        "_links": {"self": {"href": url}, "html": {"href": html}, "pull_request": {"href": pull_url}},
        "reactions": reactions_rollup(f"{url}/reactions", comment.reactions),
    }


def _find(call: Call, repo: Repo) -> Comment:
    comment = repo.review_comments.get(call.int_arg("comment_id"))
    if comment is None:
        raise not_found()
    return comment


@route("GET", "/repos/{owner}/{repo}/pulls/comments/{comment_id}")
def get_review_comment(call: Call) -> Reply:
    repo = call.repo()
    return Reply(200, review_comment_json(call, repo, _find(call, repo)))


@route("POST", "/repos/{owner}/{repo}/pulls/comments/{comment_id}/reactions")
def create_review_comment_reaction(call: Call) -> Reply:
    return _add_reaction(call, _find(call, call.repo()).reactions)
