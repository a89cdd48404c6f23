"""What a person's action on a mirrored issue means for its record: an override, a reopen, or a body to restore."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class PersonChange:
    new_state: str | None
    event: str | None
    restore_body: bool = False


def decide(record_state: str, action: str) -> PersonChange:
    """A close without a verdict is a logged override; the issue body is generated, so edits are undone."""
    if action == "closed" and record_state == "open":
        return PersonChange("closed", "override-close")
    if action == "reopened" and record_state == "closed":
        return PersonChange("open", "override-reopen")
    if action == "edited":
        return PersonChange(None, "issue-edited", restore_body=True)
    return PersonChange(None, None)
