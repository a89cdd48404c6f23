"""The last wall before text leaves perfbot: every tracker write goes out scrubbed of secrets and within size.

A report's code runs in a sandbox that hides the bot's secrets; should one still reach a message (a build log
quoting a key, an LLM answer), it is replaced here. And GitHub refuses a body over 65,536 characters with a
422 that would block every record of a push, so nothing leaves longer than that.
"""
from __future__ import annotations

from dataclasses import replace

from bot.adapters.store.locks import confirm_held
from bot.core.tracker.outgoing import Outgoing


class CleanTracker:
    """An issue tracker (GitHubIssues, FileIssues) whose every written text passes through `outgoing` first."""

    def __init__(self, tracker, outgoing: Outgoing) -> None:
        self._tracker, self._out = tracker, outgoing

    def __getattr__(self, name: str):  # reads (marked_issues, permission, pull_request, ...) pass through
        return getattr(self._tracker, name)

    def create_issue(self, title: str, body: str, labels: tuple[str, ...]) -> int:
        confirm_held()  # found-or-created under a lock: only while the lock is still this worker's
        return self._tracker.create_issue(self._out(title)[:256], self._out(body), labels)

    def update_issue(self, number: int, *, title: str, body: str, **fields) -> None:
        self._tracker.update_issue(number, title=self._out(title)[:256], body=self._out(body), **fields)

    def upsert_comment(self, number: int, marker: str, body: str, comment_id: int | None) -> int:
        confirm_held()
        return self._tracker.upsert_comment(number, marker, self._out(body), comment_id)

    def open_pull(self, head: str, base: str, title: str, body: str) -> int:
        confirm_held()
        return self._tracker.open_pull(head, base, self._out(title)[:256], self._out(body))

    def merge_pull(self, number: int, head_sha: str | None, message: str) -> str:
        return self._tracker.merge_pull(number, head_sha, self._out(message))

    def set_status(self, sha: str, context: str, state: str, description: str, target_url: str | None = None) -> None:
        self._tracker.set_status(sha, context, state, self._out(description), target_url)

    def publish_check(self, sha: str, result, status_description: str) -> str:
        clean = replace(result, title=self._out(result.title), summary=self._out(result.summary),
                        annotations=tuple({**a, "message": self._out(a.get("message",
                                                                           ""))} for a in result.annotations))
        return self._tracker.publish_check(sha, clean, self._out(status_description))
