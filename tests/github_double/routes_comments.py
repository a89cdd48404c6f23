"""Issue comments (per issue and repository-wide) and reactions on comments and on issues.

A repeated reaction (same user, same content) answers 200 with the existing reaction instead of 201, as
GitHub does; creating and deleting comments keeps the issue's `comments` count and `updated_at` in step.
"""
from __future__ import annotations

from typing import Any

from .routes_common import Call, Reply, author_association, not_found, paginate, reactions_rollup, route, user_json
from .routes_issues import find_issue
from .state import Comment, Reaction, Repo, iso, node_id, parse_iso, utc_now


def comment_json(call: Call, repo: Repo, comment: Comment) -> dict[str, Any]:
    url = f"{call.repo_url(repo)}/issues/comments/{comment.id}"
    issue = repo.issues[comment.issue_number]
    kind = "pull" if issue.pull else "issues"
    return {
        "id": comment.id, "node_id": node_id("IC", comment.id), "url": url,
        "html_url": f"{call.html_repo_url(repo)}/{kind}/{comment.issue_number}#issuecomment-{comment.id}",
        "issue_url": f"{call.repo_url(repo)}/issues/{comment.issue_number}", "body": comment.body,
        "user": user_json(call, comment.user), "created_at": iso(comment.created_at),
        "updated_at": iso(comment.updated_at), "author_association": author_association(repo, comment.user),
        "performed_via_github_app": None, "reactions": reactions_rollup(f"{url}/reactions", comment.reactions),
    }


def _since(call: Call, comments: list[Comment]) -> list[Comment]:
    since = call.query.get("since")
    if not since:
        return comments
    moment = parse_iso(since)
    return [comment for comment in comments if comment.updated_at >= moment]


def _find_comment(call: Call, repo: Repo) -> Comment:
    comment = repo.comments.get(call.int_arg("comment_id"))
    if comment is None:
        raise not_found()
    return comment


@route("GET", "/repos/{owner}/{repo}/issues/{issue_number}/comments")
def list_issue_comments(call: Call) -> Reply:
    repo = call.repo()
    number = find_issue(call, repo).number
    comments = [c for c in repo.comments.values() if c.issue_number == number]
    return paginate(call, _since(call, comments), lambda c: comment_json(call, repo, c))


@route("GET", "/repos/{owner}/{repo}/issues/comments")
def list_repo_comments(call: Call) -> Reply:
    repo = call.repo()
    comments = _since(call, list(repo.comments.values()))
    if call.query.get("sort") == "updated":
        comments.sort(key=lambda c: (c.updated_at, c.id))
    if call.query.get("direction") == "desc":
        comments.reverse()
    return paginate(call, comments, lambda c: comment_json(call, repo, c))


@route("POST", "/repos/{owner}/{repo}/issues/{issue_number}/comments")
def create_comment(call: Call) -> Reply:
    repo = call.repo()
    issue = find_issue(call, repo)
    now = utc_now()
    comment = Comment(call.state.next_id(), issue.number, call.long_text("IssueComment"), call.actor(), now, now)
    repo.comments[comment.id] = comment
    issue.comments += 1
    issue.updated_at = now
    return Reply(201, comment_json(call, repo, comment),
                 {"Location": f"{call.repo_url(repo)}/issues/comments/{comment.id}"})


@route("GET", "/repos/{owner}/{repo}/issues/comments/{comment_id}")
def get_comment(call: Call) -> Reply:
    repo = call.repo()
    return Reply(200, comment_json(call, repo, _find_comment(call, repo)))


@route("PATCH", "/repos/{owner}/{repo}/issues/comments/{comment_id}")
def update_comment(call: Call) -> Reply:
    repo = call.repo()
    comment = _find_comment(call, repo)
    call.actor()
    comment.body = call.long_text("IssueComment")
    comment.updated_at = utc_now()
    return Reply(200, comment_json(call, repo, comment))


@route("DELETE", "/repos/{owner}/{repo}/issues/comments/{comment_id}")
def delete_comment(call: Call) -> Reply:
    repo = call.repo()
    comment = _find_comment(call, repo)
    call.actor()
    del repo.comments[comment.id]
    repo.issues[comment.issue_number].comments -= 1
    return Reply(204)


def reaction_json(call: Call, reaction: Reaction) -> dict[str, Any]:
    return {"id": reaction.id, "node_id": node_id("REA", reaction.id), "user": user_json(call, reaction.user),
            "content": reaction.content, "created_at": iso(reaction.created_at)}


def _list_reactions(call: Call, reactions: list[Reaction]) -> Reply:
    content = call.query.get("content")
    chosen = [r for r in reactions if content is None or r.content == content]
    return paginate(call, chosen, lambda r: reaction_json(call, r))


def _add_reaction(call: Call, reactions: list[Reaction]) -> Reply:
    user, content = call.actor(), call.field("content")
    for existing in reactions:
        if existing.user.id == user.id and existing.content == content:
            return Reply(200, reaction_json(call, existing))
    reaction = Reaction(call.state.next_id(), content, user, utc_now())
    reactions.append(reaction)
    return Reply(201, reaction_json(call, reaction))


def _delete_reaction(call: Call, reactions: list[Reaction]) -> Reply:
    call.actor()
    wanted = call.int_arg("reaction_id")
    for index, reaction in enumerate(reactions):
        if reaction.id == wanted:
            del reactions[index]
            return Reply(204)
    raise not_found()


@route("GET", "/repos/{owner}/{repo}/issues/comments/{comment_id}/reactions")
def list_comment_reactions(call: Call) -> Reply:
    return _list_reactions(call, _find_comment(call, call.repo()).reactions)


@route("POST", "/repos/{owner}/{repo}/issues/comments/{comment_id}/reactions")
def create_comment_reaction(call: Call) -> Reply:
    return _add_reaction(call, _find_comment(call, call.repo()).reactions)


@route("DELETE", "/repos/{owner}/{repo}/issues/comments/{comment_id}/reactions/{reaction_id}")
def delete_comment_reaction(call: Call) -> Reply:
    return _delete_reaction(call, _find_comment(call, call.repo()).reactions)


@route("GET", "/repos/{owner}/{repo}/issues/{issue_number}/reactions")
def list_issue_reactions(call: Call) -> Reply:
    return _list_reactions(call, find_issue(call, call.repo()).reactions)


@route("POST", "/repos/{owner}/{repo}/issues/{issue_number}/reactions")
def create_issue_reaction(call: Call) -> Reply:
    return _add_reaction(call, find_issue(call, call.repo()).reactions)


@route("DELETE", "/repos/{owner}/{repo}/issues/{issue_number}/reactions/{reaction_id}")
def delete_issue_reaction(call: Call) -> Reply:
    return _delete_reaction(call, find_issue(call, call.repo()).reactions)
