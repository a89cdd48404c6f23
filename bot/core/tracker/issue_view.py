"""What a record's GitHub issue should look like: title, labels, state and markers, decided without I/O."""
from __future__ import annotations

import hashlib
from dataclasses import dataclass

from bot.core.tracker.untrusted import quiet_mentions
from bot.core.verify import verdict_words as words

BOT_LABEL = "perfbot"
# Fixed colours so labels look the same in every repository perfbot creates them in.
LABEL_COLORS = {
    "perfbot": "5319e7",
    "track: seq": "1d76db", "track: par": "0e8a16",
    "backend: c": "c5def5", "backend: metal": "d4c5f9", "backend: cuda": "bfe5bf",
    "state: open": "fbca04", "state: merged": "cfd3d7", "state: deleted": "cfd3d7", "state: override": "b60205",
    "state: fixed": "0e8a16",
    # Verdict labels take the colour of what they mean for the team (core/verify/verdict_words.py).
    **{f"verified: {a.text}": a.colour
       for a in map(words.of_fix, ("pass", "fail", "inconclusive", "implausible", "mismatch", "error")) if a},
    **{f"claim: {a.text}": a.colour for a in map(words.of_claim, ("reproduced", "not reproduced", "mismatch")) if a},
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

    @property
    def verified(self) -> str:
        """The fix verdict and the claim check as people read them: "fixed, claim reproduced"."""
        return words.of_record(self.verdict, self.reproduced, "-")


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
    if record.attached_fixes or (record.fix and record.fix.lower() not in ("unknown", "none")):
        labels.append("has fix")  # a branch, a commit, a PR or an inline fix: verification can start
    if record.verdict:
        labels.append(f"verified: {words.text(words.of_fix(record.verdict))}")
    if record.reproduced in ("reproduced", "not reproduced", "mismatch"):
        # a claim that does not reproduce, or whose translation computes something else, is flagged, not trusted
        labels.append(f"claim: {words.text(words.of_claim(record.reproduced))}")
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
    ratio = f" ({record.ratio:g}x)" if record.ratio is not None else ""
    title = quiet_mentions(f"{record.slug}: {record.title or 'untitled report'}{ratio}")[:250]
    return IssueSpec(title, tuple(sorted(labels)), state, reason, record_marker(record.slug))


def content_hash(*parts: object) -> str:
    digest = hashlib.sha256()
    for part in parts:
        digest.update(repr(part).encode("utf-8"))
        digest.update(b"\0")
    return digest.hexdigest()
