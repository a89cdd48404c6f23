"""Mirror: make each record's GitHub issue agree with the record, writing only what changed."""
from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Protocol

from bot.adapters.store.engine import Database
from bot.adapters.store.mirror_queries import MirrorRow, load_mirror_rows, save_mirror
from bot.adapters.templates import render
from bot.core.tracker.issue_view import IssueSpec, comment_marker, content_hash, issue_spec
from bot.core.tracker.outgoing import GITHUB_TEXT_LIMIT, fit


class IssueTracker(Protocol):
    def marked_issues(self, prefix: str = ..., label: str = ...) -> dict[str, int]: ...
    def ensure_labels(self, names: tuple[str, ...]) -> None: ...
    def create_issue(self, title: str, body: str, labels: tuple[str, ...]) -> int: ...
    def update_issue(self, number: int, *, title: str, body: str, labels: tuple[str, ...], state: str,
                     state_reason: str | None) -> None: ...
    def upsert_comment(self, number: int, marker: str, body: str, comment_id: int | None) -> int: ...
    def open_pull(self, head: str, base: str, title: str, body: str) -> int: ...
    def set_status(self, sha: str, context: str, state: str, description: str,
                   target_url: str | None = None) -> None: ...
    def publish_check(self, sha: str, result, status_description: str) -> str: ...


@dataclass
class MirrorSummary:
    counts: Counter = field(default_factory=Counter)


@dataclass
class _Pass:
    tracker: IssueTracker
    file_url: str
    marked: dict[str, int] | None = None
    numbers: dict[str, int] = field(default_factory=dict)

    def existing_number(self, marker: str) -> int | None:
        if self.marked is None:
            self.marked = self.tracker.marked_issues()  # once per pass, only when some record lacks its row
        return self.marked.get(marker)


def mirror_repo(db: Database, tracker: IssueTracker, full_name: str, slugs: Iterable[str] | None = None,
                *, file_url: str = "") -> MirrorSummary:
    """Bring the issues of `slugs` (all records when None) in step; unchanged records make no write call."""
    rows = load_mirror_rows(db, full_name, None if slugs is None else set(slugs))
    state = _Pass(tracker, file_url, numbers={r.view.slug: r.number for r in rows if r.number})
    summary = MirrorSummary()
    # Live records first, so a merged record's "Duplicate of #N" can name the new issue.
    for row in sorted(rows, key=lambda r: (r.view.state in ("merged", "deleted"), r.view.slug)):
        summary.counts[_mirror_one(db, state, row)] += 1
    return summary


def _mirror_one(db: Database, state: _Pass, row: MirrorRow) -> str:
    view = row.view
    if view.state == "merged" and view.merged_into and not view.merged_into_number:
        view = _with_target(view, state.numbers.get(view.merged_into))
    spec = issue_spec(view)
    file_url = f"{state.file_url}/{view.path}" if state.file_url else view.path
    body = render("issue_body.md.j2", marker=spec.marker, record=view, content=row.content or "",
                  commit=row.commit or "", file_url=file_url)
    if len(body) > GITHUB_TEXT_LIMIT:  # GitHub refuses it whole (422): the report is shortened, with a link
        room = GITHUB_TEXT_LIMIT - (len(body) - len(row.content or "")) - 200
        content = fit(row.content or "", room, f"the report is {len(row.content or ''):,} characters, more than "
                      f"an issue holds; read it whole in [`{view.path}`]({file_url})")
        body = render("issue_body.md.j2", marker=spec.marker, record=view, content=content,
                      commit=row.commit or "", file_url=file_url)
    wanted = content_hash(spec, body)
    lint_wanted = content_hash(row.findings) if (row.findings or row.lint_comment_id) else ""
    duplicate_wanted = view.state == "merged" and view.merged_into_number is not None
    if (row.number and row.content_hash == wanted and row.lint_hash == lint_wanted
            and (row.duplicate_comment_id is not None) == duplicate_wanted):
        return "unchanged"
    number = row.number or state.existing_number(spec.marker)
    if number is None and spec.state == "closed":
        return "skipped"  # never open an issue only to close it
    state.tracker.ensure_labels(spec.labels)
    if number is None:
        number = state.tracker.create_issue(spec.title, body, spec.labels)
        outcome = "created"
        # Saved at once: if the process dies now, the next pass finds the issue by its row or its marker.
        save_mirror(db, row.record_id, number=number, content_hash=wanted)
    else:
        outcome = "updated"
        if row.content_hash != wanted:
            _update(state.tracker, number, spec, body)
    state.numbers[view.slug] = number
    values: dict = {"number": number, "content_hash": wanted, "synced_at": datetime.now(UTC)}
    if lint_wanted != row.lint_hash:
        marker = comment_marker("lint", view.slug)
        body = render("lint_comment.md.j2", marker=marker, findings=row.findings, path=view.path)
        values["lint_comment_id"] = state.tracker.upsert_comment(number, marker, body, row.lint_comment_id)
        values["lint_hash"] = lint_wanted
    if duplicate_wanted and row.duplicate_comment_id is None:
        marker = comment_marker("duplicate", view.slug)
        body = render("duplicate_comment.md.j2", marker=marker, number=view.merged_into_number, slug=view.slug,
                      merged_into=view.merged_into)
        values["duplicate_comment_id"] = state.tracker.upsert_comment(number, marker, body, None)
    save_mirror(db, row.record_id, **values)
    return outcome


def _update(tracker: IssueTracker, number: int, spec: IssueSpec, body: str) -> None:
    tracker.update_issue(number, title=spec.title, body=body, labels=spec.labels, state=spec.state,
                         state_reason=spec.state_reason)


def _with_target(view, number: int | None):
    from dataclasses import replace

    return replace(view, merged_into_number=number)
