"""Issue search (`GET /search/issues`), enough for a bot to find its own issues again by a hidden marker.

Understood: quoted phrases and bare words (case-insensitive substring match, which for an exact marker
agrees with GitHub's token match), `in:title,body,comments` (default: all three), `repo:owner/name`,
`user:`/`org:`, `is:issue|pr|pull-request|open|closed`, `type:issue|pr`, `state:open|closed`, `label:`,
`author:`, `assignee:`, and `-` before a qualifier to negate it. Any other qualifier answers 422 so a test
never mistakes an ignored filter for an empty result. Results: newest first unless `sort`/`order` say
otherwise; only repositories the caller's token can see.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from .routes_common import ApiError, Call, Reply, paginate, route
from .routes_issues import issue_json
from .state import Issue, Repo

_TOKEN = re.compile(r'(-?)(?:([A-Za-z][\w-]*):)?(?:"([^"]*)"|(\S+))')
_FIELDS = ("title", "body", "comments")


@dataclass
class IssueQuery:
    terms: list[str] = field(default_factory=list)
    fields: tuple[str, ...] = _FIELDS
    filters: list[tuple[bool, str, str]] = field(default_factory=list)  # (negated, qualifier, value)


def parse_query(text: str) -> IssueQuery:
    query = IssueQuery()
    for negated, qualifier, quoted, bare in _TOKEN.findall(text):
        value = quoted if quoted or bare == "" else bare
        qualifier = qualifier.lower()
        if not qualifier:
            if value.upper() not in ("AND", "OR", "NOT"):  # GitHub's boolean words; AND is the default
                query.terms.append(value.lower())
        elif qualifier == "in":
            query.fields = tuple(part for part in value.lower().split(",") if part in _FIELDS) or _FIELDS
        elif qualifier in ("repo", "user", "org", "is", "type", "state", "label", "author", "assignee"):
            query.filters.append((bool(negated), qualifier, value.lower()))
        else:
            raise ApiError(422, f"Validation Failed: the GitHub double's search does not support '{qualifier}:'",
                           [{"resource": "Search", "field": "q", "code": "invalid",
                             "message": f"unsupported qualifier {qualifier}:"}])
    return query


def _passes(repo: Repo, issue: Issue, qualifier: str, value: str) -> bool:
    if qualifier == "repo":
        return repo.full_name.lower() == value
    if qualifier in ("user", "org"):
        return repo.owner.login.lower() == value
    if qualifier in ("is", "type"):
        kinds = {"issue": issue.pull is None, "pr": issue.pull is not None, "pull-request": issue.pull is not None,
                 "open": issue.state == "open", "closed": issue.state == "closed"}
        if value not in kinds:
            raise ApiError(422, f"Validation Failed: unknown {qualifier}:{value}")
        return kinds[value]
    if qualifier == "state":
        return issue.state == value
    if qualifier == "label":
        return value in {label.name.lower() for label in issue.labels}
    if qualifier == "author":
        return issue.user.login.lower() == value
    return value in {user.login.lower() for user in issue.assignees}  # assignee


def _text(repo: Repo, issue: Issue, fields: tuple[str, ...]) -> str:
    parts = []
    if "title" in fields:
        parts.append(issue.title)
    if "body" in fields:
        parts.append(issue.body or "")
    if "comments" in fields:
        parts.extend(c.body or "" for c in repo.comments.values() if c.issue_number == issue.number)
    return "\n".join(parts).lower()


@route("GET", "/search/issues")
def search_issues(call: Call) -> Reply:
    query = parse_query(call.query.get("q", ""))
    found: list[tuple[Repo, Issue]] = []
    for repo in call.state.repos.values():
        if not call.can_see(repo) or (repo.private and call.identity is None):
            continue
        for issue in repo.issues.values():
            if all(_passes(repo, issue, q, v) != negated for negated, q, v in query.filters):
                text = _text(repo, issue, query.fields) if query.terms else ""
                if all(term in text for term in query.terms):
                    found.append((repo, issue))
    sort = call.query.get("sort")
    key = {"updated": lambda pair: pair[1].updated_at,
           "comments": lambda pair: pair[1].comments}.get(sort, lambda pair: pair[1].created_at)
    found.sort(key=lambda pair: (key(pair), pair[1].id), reverse=call.query.get("order", "desc") == "desc")
    return paginate(call, found, lambda pair: dict(issue_json(call, *pair), score=1.0),
                    wrap=lambda page, total: {"total_count": total, "incomplete_results": False, "items": page,
                                              "search_type": "lexical"})
