"""What git says happened to reports, as plain data: commits and the report changes they made."""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from bot.core.reports.records import slug_of

ADDED, MODIFIED, RENAMED, DELETED, MERGED = "added", "modified", "renamed", "deleted", "merged"


@dataclass(frozen=True)
class CommitInfo:
    sha: str
    author_name: str
    author_email: str
    committed_at: datetime
    summary: str = ""


@dataclass(frozen=True)
class ReportChange:
    """One report file changed by one commit; `data` is the new content (None for a deletion)."""

    kind: str
    path: str
    old_path: str | None = None
    data: bytes | None = None

    @property
    def slug(self) -> str:
        return slug_of(self.path) or ""

    @property
    def old_slug(self) -> str | None:
        return slug_of(self.old_path) if self.old_path else None


def order_for_apply(changes: list[ReportChange]) -> list[ReportChange]:
    """Renames first (they free a slug), then adds and edits, deletions last, each group by path.

    Applying deletions last lets the merge rule see, within one commit, both the superseding report and
    the reports it deletes.
    """
    rank = {RENAMED: 0, ADDED: 1, MODIFIED: 1, DELETED: 2}
    return sorted(changes, key=lambda c: (rank[c.kind], c.path))

