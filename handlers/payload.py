"""Webhook payloads parsed once into small typed models: only the fields perfbot reads, each checked.

A delivery's payload is signed, but its values are still only data: `parse` turns it into the model of its event
(or refuses it as Invalid, naming the field), and every handler reads that model, never the dict.
"""
from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Annotated, Any, Generic, TypeVar

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, StringConstraints, ValidationError

from bot.errors import Invalid, NotFound

_NAME_PART = re.compile(r"[A-Za-z0-9_.-]{1,100}")


def _full_name(value: str) -> str:
    parts = value.split("/")
    if len(parts) != 2 or not all(_NAME_PART.fullmatch(p) and p.strip(".") for p in parts):
        raise ValueError("not OWNER/NAME of letters, digits, '.', '-' and '_'")
    return value


FullName = Annotated[str, AfterValidator(_full_name)]
Sha = Annotated[str, StringConstraints(pattern=r"^[0-9a-f]{40}$")]
# GitHub's ids are 64-bit; a larger number names nothing and must not reach the store.
Id = Annotated[int, Field(ge=1, le=2**63 - 1, strict=True)]


class Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="ignore")


class Account(Model):
    login: str = ""


class InstallationRef(Model):
    id: Id


class Repository(Model):
    full_name: FullName
    default_branch: str | None = None
    master_branch: str | None = None  # older GitHub Enterprise payloads

    @property
    def default(self) -> str | None:
        return self.default_branch or self.master_branch


class Envelope(Model):
    """What every GitHub event carries: the repository, the installation and who sent it."""

    repository: Repository | None = None
    installation: InstallationRef | None = None
    sender: Account | None = None

    @property
    def full_name(self) -> str:
        if self.repository is None:
            raise Invalid("has no repository.full_name", at="payload")
        return self.repository.full_name

    @property
    def installation_id(self) -> int | None:
        return self.installation.id if self.installation else None

    @property
    def sender_login(self) -> str:
        return self.sender.login if self.sender else ""


class Push(Envelope):
    ref: str = ""
    after: Sha
    deleted: bool = False

    @property
    def to_default_branch(self) -> bool:
        """Other branches are fix branches and drafts: reports count once they land on the default branch."""
        default = self.repository.default if self.repository else None
        return bool(default) and self.ref == f"refs/heads/{default}" and not self.deleted


class BodyChange(Model):
    source: str | None = Field(default=None, alias="from")


class Changes(Model):
    body: BodyChange | None = None

    @property
    def old_body(self) -> str | None:
        return self.body.source if self.body else None


class Comment(Model):
    id: Id
    body: str | None = None
    user: Account | None = None


class Thread(Model):
    """An issue or a pull request, as a comment's payload names it."""

    number: Id
    pull_request: dict[str, Any] | None = None  # on an issue: present when the issue is a pull request
    body: str | None = None


class CommentEvent(Envelope):
    comment: Comment
    issue: Thread | None = None
    pull_request: Thread | None = None
    changes: Changes | None = None


class Branch(Model):
    ref: str
    sha: Sha
    repo: Repository | None = None


class PullRequest(Model):
    number: Id
    head: Branch
    base: Branch
    body: str | None = None
    user: Account | None = None
    draft: bool = False
    merged: bool = False


class PullRequestEvent(Envelope):
    pull_request: PullRequest


class Label(Model):
    name: str = ""


class IssuesEvent(Envelope):
    issue: Thread
    label: Label | None = None
    changes: Changes | None = None


class Installation(InstallationRef):
    account: Account | None = None


class RepositoryName(Model):
    full_name: str


class InstallationEvent(Envelope):
    installation: Installation  # required here: the event is about it
    repositories: list[RepositoryName] = []
    repositories_added: list[RepositoryName] = []
    repositories_removed: list[RepositoryName] = []

    @property
    def account_login(self) -> str:
        return self.installation.account.login if self.installation.account else ""


class WorkflowRun(Model):
    id: Id
    display_title: str | None = None
    path: str | None = None
    event: str | None = None
    status: str | None = None
    conclusion: str | None = None
    html_url: str | None = None
    created_at: datetime | None = None
    actor: Account | None = None


class WorkflowRunEvent(Envelope):
    workflow_run: WorkflowRun


# perfbot's own deliveries, queued by itself
class BenchRunDue(Model):
    run: Id


class BisectionDue(Model):
    bisection: Id


class GuardCheckDue(Model):
    head: Sha | None = None


class ReviewDue(Model):
    """Reports a push's LLM budget left unreviewed (instance file `[llm]`), reviewed when the budget allows."""

    slugs: list[Annotated[str, StringConstraints(pattern=r"^perf_[a-z0-9_]+$", max_length=200)]]


class NoticeDue(Model):
    url: str
    notice: dict[str, Any]


class Tick(Model):
    """The scheduler's ticks (reconcile, digest, actions poll): nothing in them but their name."""


MODELS: dict[str, type[Model]] = {
    "push": Push, "issue_comment": CommentEvent, "pull_request_review_comment": CommentEvent,
    "pull_request": PullRequestEvent, "issues": IssuesEvent, "installation": InstallationEvent,
    "installation_repositories": InstallationEvent, "workflow_run": WorkflowRunEvent,
    "perfbot.verify": BenchRunDue, "perfbot.bisect": BisectionDue, "perfbot.guards": GuardCheckDue,
    "perfbot.notify": NoticeDue, "perfbot.review": ReviewDue, "perfbot.reconcile": Tick, "perfbot.digest": Tick,
    "perfbot.actions-poll": Tick,
}

P = TypeVar("P", bound=Model, covariant=True)


@dataclass(frozen=True)
class Delivery(Generic[P]):
    """A delivery as a handler sees it: its payload parsed into its event's model."""

    name: str
    action: str | None
    delivery_id: str
    payload: P
    repo: str | None  # perfbot's own deliveries name their repository here
    installation_id: int | None
    keep_alive: Callable[[float], object]

    @property
    def named_repo(self) -> str:
        """The repository one of perfbot's own deliveries names; refused when it names none."""
        if not self.repo:
            raise Invalid("names no repository", at=f"{self.name} delivery {self.delivery_id}")
        return self.repo


def parse(name: str, payload: dict[str, Any]) -> Model:
    """The payload as its event's model, or an Invalid refusal naming the first field that is wrong."""
    model = MODELS.get(name)
    if model is None:
        raise NotFound(f"no handler reads {name!r} deliveries", name=name)
    try:
        return model.model_validate(payload)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "payload"
        raise Invalid(f"{first['msg']} (got {str(first.get('input'))[:80]!r})", at=f"{name} payload",
                      key=where) from None
