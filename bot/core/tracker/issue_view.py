"""What a record's GitHub issue should look like: title, labels, state and markers, decided without I/O."""
from __future__ import annotations

import hashlib
from dataclasses import dataclass

from bot.core.lead import wording
from bot.core.lead.standing import Standing
from bot.core.tracker.untrusted import quiet_mentions
from bot.core.verify import verdict_words as words
from bot.core.verify.vocabulary import Outcome

BOT_LABEL = "perfbot"
# Fixed colours so labels look the same in every repository perfbot creates them in.
LABEL_COLORS = {
    "perfbot": "5319e7",
    "track: seq": "1d76db", "track: par": "0e8a16",
    "backend: c": "c5def5", "backend: metal": "d4c5f9", "backend: cuda": "bfe5bf",
    "state: open": "fbca04", "state: merged": "cfd3d7", "state: deleted": "cfd3d7", "state: override": "b60205",
    "state: fixed": "0e8a16",
    # A record's one outcome (core/lead/standing.py), in the colour of what it means for the team.
    **{f"outcome: {o}": words.COLOURS[wording.TONES[o]] for o in Outcome},
    "lint: errors": "d93f0b",
    "has fix": "0e8a16",
    "dedup: duplicate": "e99695", "dedup: subsumes": "e99695", "dedup: overlaps": "f9d0c4",
}


def record_marker(slug: str) -> str:
    """The hidden marker that finds a record's issue again, even after the database is lost."""
    return f"<!-- perfbot:record {slug} -->"


def comment_marker(kind: str, slug: str) -> str:
    return f"<!-- perfbot:{kind} {slug} -->"


@dataclass(frozen=True)
class RecordView:
    """The facts of a record that its issue shows."""

    slug: str
    title: str
    path: str
    track: str | None
    backend: str | None
    threads: int | None
    ratio: float | None
    fix: str | None
    state: str
    errors: int
    warnings: int
    merged_into: str | None = None
    merged_into_number: int | None = None
    dedup: str | None = None  # the strongest open overlap verdict involving this record
    verdict: str | None = None  # the latest verification of its fix
    reproduced: str | None = None  # what measuring the claim on the default branch found
    attached_fixes: int = 0  # PRs and branches attached as fixes
    standing: Standing | None = None  # what its runs found (core/lead/standing.py); None: never computed

    @property
    def verified(self) -> str:
        """The standing in one sentence, each figure with its measure: the words of every other view."""
        return wording.said(self.standing) if self.standing else "not measured"

    @property
    def claimed_text(self) -> str:
        if self.standing:
            return wording.claim_cell(self.standing)
        return wording.ratio_text(self.ratio) if self.ratio is not None else "?"

    @property
    def measured_text(self) -> str:
        return wording.measured_cell(self.standing) if self.standing else "–"

    @property
    def fix_text(self) -> str:
        """The fix the standing names (an attached branch, or what `fix:` names), and whether it is in main."""
        fix = self.standing.fix if self.standing else None
        if fix is None:
            return self.fix or "-"
        return f"{fix.ref} ({'in main' if fix.merged else 'not merged'})"


@dataclass(frozen=True)
class IssueSpec:
    title: str
    labels: tuple[str, ...]
    state: str
    state_reason: str | None
    marker: str


def issue_spec(record: RecordView) -> IssueSpec:
    labels = [BOT_LABEL]
    if record.track:
        labels.append(f"track: {record.track}")
    if record.backend:
        labels.append(f"backend: {record.backend}")
    labels.append(f"state: {'override' if record.state == 'closed' else record.state}")
    if record.errors:
        labels.append("lint: errors")
    if record.standing is not None and record.standing.fix is not None:
        labels.append("has fix")  # the same fix the record page and the digest name
    if record.standing is not None and record.standing.outcome is not Outcome.UNMEASURED:
        labels.append(f"outcome: {record.standing.outcome}")
    if record.dedup and record.state in ("open", "closed"):
        labels.append(f"dedup: {record.dedup}")
    state, reason = "open", None
    if record.state == "merged":
        state, reason = "closed", "duplicate"
    elif record.state == "deleted":
        state, reason = "closed", "not_planned"
    elif record.state == "fixed":
        state, reason = "closed", "completed"  # its fix merged with a passing verdict on that head
    elif record.state == "closed":
        state, reason = "closed", "completed"  # closed by a person; perfbot only labels it as an override
    ratio = f" (claimed {record.claimed_text})" if record.ratio is not None else ""  # with its measure
    title = quiet_mentions(f"{record.slug}: {record.title or 'untitled report'}{ratio}")[:250]
    return IssueSpec(title, tuple(sorted(labels)), state, reason, record_marker(record.slug))


def content_hash(*parts: object) -> str:
    digest = hashlib.sha256()
    for part in parts:
        digest.update(repr(part).encode("utf-8"))
        digest.update(b"\0")
    return digest.hexdigest()
