"""What a handler read from a webhook payload and hands to a use case: the parts perfbot acts on, validated once."""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime


@dataclass(frozen=True)
class PullInfo:
    """The parts of a pull request perfbot acts on, validated by the handler."""

    number: int
    head_ref: str
    head_sha: str
    base_ref: str
    base_sha: str
    body: str
    author: str
    same_repo: bool
    draft: bool = False
    merged: bool = False


@dataclass(frozen=True)
class Where:
    """The comment that holds the commands, and who wrote them: its author, or whoever edited them in."""

    full_name: str
    number: int  # the issue or pull request
    is_pull: bool
    comment_id: int
    author: str  # who wrote the command lines: whose permission they run with
    installation_id: int | None
    delivery_id: str
    review_comment: bool = False
    comment_author: str = ""  # who wrote the comment, when someone else edited commands into it

    @property
    def edited_by_other(self) -> bool:
        return bool(self.comment_author) and self.comment_author.lower() != self.author.lower()


@dataclass(frozen=True)
class WorkflowRun:
    """A GitHub Actions workflow run, as its webhook or the API describes it."""

    id: int
    title: str  # display_title: "perfbot bench run N", from the workflow's run-name
    path: str  # .github/workflows/perfbot-bench.yml
    event: str
    status: str  # queued | in_progress | completed ...
    conclusion: str | None  # success | failure | cancelled | timed_out ... once completed
    actor: str
    created_at: datetime
    html_url: str
