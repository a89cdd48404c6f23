"""The issue tracker on GitHub: issues found by marker, labels created on first use, marked comments edited.

Anyone can write perfbot's hidden markers, so an issue or comment counts as perfbot's only when perfbot's own
login wrote it: a look-alike is never edited, trusted or adopted."""
from __future__ import annotations

import threading
import time
from collections.abc import Callable

from github import Github, GithubException
from github.GithubObject import NotSet

from bot.adapters.github.checks import CheckResult, publish_check_run
from bot.adapters.github.client import classified_errors
from bot.core.tracker.issue_view import BOT_LABEL, LABEL_COLORS

PERMISSION_TTL_SECONDS = 60.0  # long enough for a burst of commands, short enough that a removal counts
_permissions: dict[tuple[str, str], tuple[float, str]] = {}
_permissions_lock = threading.Lock()


class GitHubIssues:
    """One repository's issues, as the mirror needs them; every call is classified for retry."""

    def __init__(self, client: Github, full_name: str, own_login: Callable[[], str]) -> None:
        self.full_name = full_name
        self.repo = client.get_repo(full_name)
        self.own_login = own_login  # GitHubClients.own_login: asked of GitHub once, then remembered
        self._labels: set[str] | None = None

    def _mine(self, item) -> bool:
        """Written by perfbot itself (logins are case-insensitive on GitHub)."""
        return item.user is not None and item.user.login.lower() == self.own_login().lower()

    def marked_issues(self, prefix: str = "<!-- perfbot:record ", label: str = BOT_LABEL) -> dict[str, int]:
        """Marker line -> issue number for every issue perfbot made (found by its label and author, then its first
        line); an issue someone else opened with the marker is not one."""
        found: dict[str, int] = {}
        with classified_errors(f"listing perfbot issues of {self.full_name}"):
            # Filtered here, not with `creator=`: how that parameter spells an App's bot user is not documented.
            for issue in self.repo.get_issues(state="all", labels=[label]):
                if not self._mine(issue):
                    continue
                first_line = (issue.body or "").split("\n", 1)[0].strip()
                if first_line.startswith(prefix):
                    found.setdefault(first_line, issue.number)
        return found

    def ensure_labels(self, names: tuple[str, ...]) -> None:
        with classified_errors(f"labels of {self.full_name}"):
            if self._labels is None:
                self._labels = {label.name for label in self.repo.get_labels()}
            for name in names:
                if name not in self._labels:
                    try:
                        self.repo.create_label(name, LABEL_COLORS.get(name, "ededed"), "managed by perfbot")
                    except GithubException as exc:
                        if exc.status != 422:  # 422: someone created it meanwhile, which is what we wanted
                            raise
                    self._labels.add(name)

    def create_issue(self, title: str, body: str, labels: tuple[str, ...]) -> int:
        with classified_errors(f"creating an issue in {self.full_name}"):
            return self.repo.create_issue(title=title, body=body, labels=list(labels)).number

    def update_issue(self, number: int, *, title: str, body: str, labels: tuple[str, ...], state: str,
                     state_reason: str | None) -> None:
        with classified_errors(f"updating issue #{number} of {self.full_name}"):
            issue = self.repo.get_issue(number)
            closing = state == "closed" and state_reason and issue.state != "closed"
            issue.edit(title=title, body=body, labels=list(labels), state=state,
                       state_reason=state_reason if closing and state_reason else NotSet)

    def upsert_comment(self, number: int, marker: str, body: str, comment_id: int | None) -> int:
        """Edit perfbot's marked comment (by id, else found by marker among its own comments), or post it once."""
        with classified_errors(f"commenting on issue #{number} of {self.full_name}"):
            issue = self.repo.get_issue(number)
            comment = None
            if comment_id is not None:
                try:
                    comment = issue.get_comment(comment_id)
                except GithubException as exc:
                    if exc.status != 404:
                        raise
            if comment is not None and not self._mine(comment):
                comment = None
            if comment is None:
                comment = next((c for c in issue.get_comments() if self._mine(c) and (c.body or "").startswith(marker)),
                               None)
            if comment is None:
                return issue.create_comment(body).id
            if comment.body != body:
                comment.edit(body)
            return comment.id

    def open_pull(self, head: str, base: str, title: str, body: str) -> int:
        """The open pull request from `head`, or a new one: reopening the same merge never doubles it."""
        with classified_errors(f"opening a pull request in {self.full_name}"):
            owner = self.full_name.split("/", 1)[0]
            for pull in self.repo.get_pulls(state="open", head=f"{owner}:{head}"):
                return pull.number
            return self.repo.create_pull(title=title, body=body, head=head, base=base).number

    def open_pulls_from(self, prefix: str) -> list[dict]:
        """The open pull requests whose head branch (of this repository) starts with `prefix`."""
        with classified_errors(f"listing pull requests of {self.full_name}"):
            return [{"number": p.number, "head_ref": p.head.ref, "head_sha": p.head.sha, "title": p.title}
                    for p in self.repo.get_pulls(state="open") if p.head.ref.startswith(prefix)
                    and p.head.repo is not None and p.head.repo.full_name == self.full_name]

    def merge_pull(self, number: int, head_sha: str | None, message: str) -> str:
        """Merge pull request `number`, only if its head is still `head_sha` when given (GitHub answers 409)."""
        with classified_errors(f"merging pull request #{number} of {self.full_name}"):
            return self.repo.get_pull(number).merge(commit_message=message, merge_method="merge",
                                                    sha=head_sha or NotSet).sha

    def set_status(self, sha: str, context: str, state: str, description: str, target_url: str | None = None) -> None:
        """A commit status on a PR head (works with a token and with an App, unlike check runs)."""
        with classified_errors(f"setting status {context} on {sha[:12]} of {self.full_name}"):
            fields = {"state": state, "description": description[:140], "context": context}
            if target_url:
                fields["target_url"] = target_url
            self.repo.get_commit(sha).create_status(**fields)

    def publish_check(self, sha: str, result: CheckResult, status_description: str) -> str:
        """A check run with annotations; with a personal token (no check runs) the commit status instead."""
        if publish_check_run(self.repo, self.full_name, sha, result):
            return "check-run"
        self.set_status(sha, result.name, "success" if result.conclusion == "success" else "failure",
                        status_description)
        return "status"

    def permission(self, login: str) -> str:
        """admin | write | read | none, through the collaborator permission API, remembered for a minute."""
        key = (self.full_name.lower(), login.lower())
        with _permissions_lock:
            cached = _permissions.get(key)
        if cached and time.monotonic() - cached[0] < PERMISSION_TTL_SECONDS:
            return cached[1]
        with classified_errors(f"permission of {login} on {self.full_name}"):
            try:
                level = self.repo.get_collaborator_permission(login)
            except GithubException as exc:
                if exc.status != 404:  # 404: not a collaborator (or no such user): no permission at all
                    raise
                level = "none"
        with _permissions_lock:
            _permissions[key] = (time.monotonic(), level)
        return level

    def react(self, number: int, comment_id: int, content: str, *, review_comment: bool = False) -> None:
        """A reaction on a comment: 'eyes' says perfbot saw the command before it answers."""
        with classified_errors(f"reacting to comment {comment_id} of {self.full_name}"):
            if review_comment:
                self.repo.get_pull(number).get_review_comment(comment_id).create_reaction(content)
            else:
                self.repo.get_issue(number).get_comment(comment_id).create_reaction(content)

    def pull_request(self, number: int) -> dict:
        """What a command on a PR needs: its branches, shas, body, author, and whether it comes from a fork."""
        with classified_errors(f"reading pull request #{number} of {self.full_name}"):
            pull = self.repo.get_pull(number)
            head_repo = pull.head.repo.full_name if pull.head.repo is not None else None
            return {"number": number, "head_ref": pull.head.ref, "head_sha": pull.head.sha, "base_ref": pull.base.ref,
                    "base_sha": pull.base.sha, "body": pull.body or "", "author": pull.user.login if pull.user else "",
                    "same_repo": head_repo == self.full_name, "draft": bool(pull.draft), "merged": bool(pull.merged)}
