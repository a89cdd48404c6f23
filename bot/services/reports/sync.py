"""Sync: read the reports a range of commits changed, and make the records agree with them."""
from __future__ import annotations

import dataclasses
import hashlib
import logging
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

from bot.adapters.git import GitRepository
from bot.adapters.store.engine import Database
from bot.adapters.store.models import Record
from bot.adapters.store.repository import RecordRepository, RevisionInput
from bot.core.reports.history import (
    ADDED,
    DELETED,
    MERGED,
    MODIFIED,
    RENAMED,
    CommitInfo,
    ReportChange,
    order_for_apply,
)
from bot.core.reports.reading import Reading, read_report, reading_of
from bot.core.reports.records import ReadingOptions
from bot.errors import TransientError
from bot.services.bench.bench_inputs import reading_at
from bot.services.reports.fact_review import FactReview
from bot.services.reports.identities import KEPT_STATES, LIVE, LIVE_STATES, Identities

# Long histories are written in chunks, each with its own sync mark, so an interrupted backfill resumes.
COMMITS_PER_TRANSACTION = 200
SNAPSHOT_STEP = 250  # reports per step of a first sync (see _parts)

log = logging.getLogger("perfbot.services")


@dataclass(frozen=True)
class Step:
    """The report changes one commit made, as sync applies them."""

    commit: CommitInfo
    changes: tuple[ReportChange, ...]
    reread: bool = False  # every report at the head, read again because `.perfbot.toml` reads reports differently


@dataclass
class SyncSummary:
    repo: str
    head: str
    previous: str | None
    mode: str
    commits: int = 0
    counts: Counter = field(default_factory=Counter)
    ignored: list[str] = field(default_factory=list)
    touched: set[str] = field(default_factory=set)
    oversized: set[str] = field(default_factory=set)  # over the size limit: mirrored with an error, no LLM asked
    reading: ReadingOptions = ReadingOptions()  # the head's `.perfbot.toml`'s, which every report was read with
    passed_over: str | None = None  # the commit asked for, when it was not newer than the stored head

    @property
    def changed(self) -> int:
        return sum(v for k, v in self.counts.items() if k != "unchanged")


ProgressFn = Callable[[int], None]


class SyncRaced(TransientError):
    """Another sync of the same repository stored a new head after this one planned: nothing was written."""


def plan(git_repo: GitRepository, head: str, last: str | None, history: bool) -> tuple[str, list[Step], list[str],
                                                                                       frozenset[str]]:
    """Decide which commits to read: the mode, the steps, ignored paths, and slugs git history already knows."""
    if history:
        commits = git_repo.first_parent_commits(None, head)
        return "history", _diff_steps(git_repo, commits, None) or [], [], frozenset()
    if last == head:
        return "up-to-date", [], [], frozenset()
    if last is None:
        reports, ignored = git_repo.snapshot(head)
        touches, seen = git_repo.report_history(head)
        head_info = git_repo.commit(head)
        by_commit: dict[str, list[ReportChange]] = {}
        infos = {}
        for change in reports:
            info = touches.get(change.path, head_info)
            infos[info.sha] = info
            by_commit.setdefault(info.sha, []).append(change)
        steps = sorted((Step(infos[sha], tuple(part)) for sha, chs in by_commit.items() for part in _parts(chs)),
                       key=lambda s: s.commit.committed_at)
        return "snapshot", steps, ignored, seen
    if git_repo.is_ancestor(last, head):
        commits = git_repo.first_parent_commits(last, head)
        diffed = _diff_steps(git_repo, commits, last)
        if diffed is not None:
            return "incremental", diffed, [], frozenset()
    # History was rewritten (or `last` is off the first-parent line): one step from what we saw to what is there.
    changes, ignored = git_repo.changes(head, last)
    return "rewritten", [Step(git_repo.commit(head), tuple(changes))], ignored, frozenset()


def _parts(changes: list[ReportChange]) -> list[list[ReportChange]]:
    """A snapshot commit's additions in steps of SNAPSHOT_STEP, in path order.

    Only additions: no step can rename or delete what another holds, and the merge rule finds a superseded
    report of the same commit live (so leaves it alone) whichever step holds it.
    """
    ordered = sorted(changes, key=lambda c: c.path)
    return [ordered[start:start + SNAPSHOT_STEP] for start in range(0, len(ordered), SNAPSHOT_STEP)]


def _diff_steps(git_repo: GitRepository, commits: list[CommitInfo], start: str | None) -> list[Step] | None:
    steps, parent = [], start
    for info in commits:
        first_parent = git_repo.first_parent(info.sha)
        if first_parent != parent:
            return None
        changes, _ = git_repo.changes(info.sha, first_parent)
        if changes:
            steps.append(Step(info, tuple(changes)))
        parent = info.sha
    return steps


def newest(git_repo: GitRepository, last: str | None, ref: str | None) -> tuple[str, str | None]:
    """The commit to sync to: the newest of the stored head `last` and `ref`, and the commit `ref` named when that
    is not the one chosen.

    Deliveries arrive in any order (a retry, a redelivery, a crashed worker's push run again), so the order they
    are handled in says nothing about which commit is newer; git does. A `ref` the stored head descends from,
    one off its line (a force push) or one the clone no longer has is no longer the branch: the branch's tip
    as fetched decides, and when that is the stored head nothing moves. Only when the fetched branch itself went
    back (a force push to an older commit) does the head move to an ancestor: then that is what the branch holds.
    """
    def tip() -> str:
        return git_repo.resolve(git_repo.default_ref())

    if ref is None:
        return tip(), None
    if last is not None and re.fullmatch(r"[0-9a-f]{40}", ref) and not git_repo.has_commit(ref):
        return tip(), ref  # pushed, then force-pushed away before this clone was fetched
    wanted = git_repo.resolve(ref)
    if last is None or wanted == last or git_repo.is_ancestor(last, wanted):
        return wanted, None
    return tip(), wanted


def sync(db: Database, git_repo: GitRepository, *, ref: str | None = None, history: bool = False,
         history_on_first_sync: bool = False, on_plan: Callable[[int], None] | None = None,
         on_progress: ProgressFn | None = None, facts: FactReview | None = None,
         max_bytes: int = ReadingOptions.max_bytes) -> SyncSummary:
    """Bring the store up to `ref` (default: the checked-out branch), or leave it where it is when it holds a
    newer commit (see `newest`). Re-running on the same input writes nothing.

    With `facts` (an agent reviewer), a report whose facts the offline reading left open is asked about once
    per content, before the transaction that writes it.
    """
    key = git_repo.full_name
    with db.session() as session:
        last = RecordRepository.open(session, key).last_synced_commit
    head, passed_over = newest(git_repo, last, ref)
    mode, steps, ignored, seen = plan(git_repo, head, last, history or (history_on_first_sync and last is None))
    summary = SyncSummary(repo=key, head=head, previous=last, mode=mode, ignored=ignored,
                          reading=_reading(git_repo, head, max_bytes), passed_over=passed_over)
    if passed_over:
        log.info("%s: %s is not newer than the stored %s; synced to the branch's tip %s (%s)", key, passed_over[:12],
                 (last or "")[:12], head[:12], mode)
    before = _reading(git_repo, last, max_bytes) if last is not None else None
    if mode in ("incremental", "rewritten") and before is not None and before != summary.reading:
        # New fence tags, reference factor or reserved paths: reports no commit touched may now read otherwise.
        reports, _ = git_repo.snapshot(head)
        steps.extend(Step(git_repo.commit(head), tuple(part), reread=True) for part in _parts(reports))
        summary.mode = f"{mode} + re-read (.perfbot.toml reads reports differently)"
    if on_plan:
        on_plan(sum(len(s.changes) for s in steps))
    ids = Identities(replay=mode == "history")
    expected = last
    for start in range(0, max(len(steps), 1), COMMITS_PER_TRANSACTION):
        chunk = steps[start:start + COMMITS_PER_TRANSACTION]
        # The agent is asked before the transaction opens, so the store is never held over a request.
        read = [_with_agent_facts(step, read_step(step, summary.reading), facts, summary.reading) for step in chunk]
        mark = head if start + COMMITS_PER_TRANSACTION >= len(steps) else _resume_point(mode, chunk)
        _apply_chunk(db, key, chunk, read, summary, ids, seen, on_progress, expected, mark)
        expected = mark or expected
    summary.commits = len(steps)
    return summary


def _reading(git_repo: GitRepository, sha: str, max_bytes: int) -> ReadingOptions:
    """How reports are read at `sha`: its `.perfbot.toml`, the operator's size limit, and the tree's paths under
    a reserved name, which every report's lint then names (a committed .perfbot-run/ is ignored, never silently)."""
    return dataclasses.replace(reading_at(git_repo, sha), max_bytes=max_bytes, reserved=git_repo.reserved_paths(sha))


def _apply_chunk(db: Database, key: str, chunk: list[Step], read: list[dict[str, Reading]], summary: SyncSummary,
                 ids: Identities, seen: frozenset[str], on_progress: ProgressFn | None, expected: str | None,
                 mark: str | None) -> None:
    """One transaction: the chunk's commits, then the sync mark when there is one to set.

    The transaction first takes the repository's row, provided its mark is still the one this sync planned
    from: a sync that raced another (a second process, `perfbot sync` beside the service, a job run twice)
    writes nothing and is retried from the head the other one stored.
    """
    with db.session() as session:
        if not RecordRepository.hold_mark(session, key, expected):
            raise SyncRaced(f"{key}: another sync moved the stored head from {(expected or 'nothing')[:12]} while "
                            "this one read the reports; it is retried from the new head")
        records = RecordRepository.open(session, key)
        for step, step_read in zip(chunk, read, strict=False):
            apply_step(records, step, summary, ids, seen, step_read)
            if on_progress:
                on_progress(len(step.changes))
        records.insert_queued()  # the chunk's new reports commit with it, marked or not
        # The sync mark moves in the same transaction as the revisions it covers.
        if mark is not None:
            records.mark_synced(mark)


def _resume_point(mode: str, chunk: list[Step]) -> str | None:
    """The commit a sync interrupted after `chunk` may resume from, or None to leave the mark where it was.

    Replayed commits (history, incremental) are whole and in first-parent order, so everything up to the chunk's
    last one is stored. A snapshot's steps are not: a commit's reports span several steps, and steps are ordered
    by date, not ancestry, so no commit covers what is written; an interrupted first sync starts over as one,
    finding what it stored already unchanged.
    """
    if not chunk or chunk[-1].reread:  # the head's re-read is not done until its last step is
        return None
    return chunk[-1].commit.sha if mode in ("history", "incremental") else None


def apply_step(records: RecordRepository, step: Step, summary: SyncSummary, ids: Identities,
               seen: frozenset[str] = frozenset(), read: dict[str, Reading] | None = None) -> None:
    """Apply one commit's report changes, then the team's merge rule for the reports it touched."""
    if read is None:
        read = read_step(step)
    named = [s for r in read.values() for s in r.supersedes]
    records.preload([c.slug for c in step.changes] + [c.old_slug for c in step.changes if c.old_slug] + named)
    touched: list[Record] = []
    for change in order_for_apply(split_superseding_renames(step.changes, read)):
        if change.kind == DELETED:
            if _delete(records, ids, step.commit, change):
                summary.counts[DELETED] += 1
                summary.touched.add(change.slug)
            continue
        outcome, record = _write(records, ids, step.commit, change, read[change.path], seen, step.reread)
        if read[change.path].oversized:
            summary.oversized.add(change.slug)
        summary.counts[outcome] += 1
        if outcome != "unchanged":
            summary.touched.add(record.slug if record is not None else change.slug)
        if record is not None and record.supersedes:
            touched.append(record)
    for record in touched:
        for slug in dict.fromkeys(record.supersedes):
            old = ids.lookup(records, slug)
            if old is None or old is record or ids.is_live(old) or old.state == MERGED:
                continue
            records.mark_merged(old, record, step.commit)
            summary.counts[MERGED] += 1
            summary.touched.add(old.slug)


def read_step(step: Step, reading: ReadingOptions = ReadingOptions()) -> dict[str, Reading]:
    """Each report the step adds or changes, read (parsed, linted, audited) in this process."""
    return {change.path: read_report(change.path, change.data or b"", reading) for change in step.changes
            if change.kind != DELETED}


def _with_agent_facts(step: Step, read: dict[str, Reading], facts: FactReview | None,
                      reading: ReadingOptions = ReadingOptions()) -> dict[str, Reading]:
    """With an agent reviewer, each reading with the facts it read where the offline reading left some open."""
    if facts is None:
        return read
    for change in step.changes:
        known = read.get(change.path)
        if known is None or change.kind == DELETED or known.oversized:  # never an LLM's to read
            continue
        reviewed = facts.review(known.result, (change.data or b"").decode("utf-8", errors="replace"))
        for note in reviewed.notes():
            log.info("%s: %s", change.path, note)
        if reviewed.result is not known.result:
            read[change.path] = reading_of(change.path, reviewed.result, reading)
    return read


def split_superseding_renames(changes, read: dict[str, Reading]) -> list[ReportChange]:
    """Git calls a merged report that resembles the one it replaces a rename; the team calls it a merge.

    When the new file's `supersedes` names the old one, the change is the delete-and-merge rule at work:
    an addition plus a deletion, so the old record is merged rather than renamed.
    """
    out: list[ReportChange] = []
    for change in changes:
        reading = read.get(change.path)
        if change.kind == RENAMED and reading and change.old_slug in reading.supersedes:
            out.append(ReportChange(ADDED, change.path, None, change.data))
            out.append(ReportChange(DELETED, change.old_path))
        else:
            out.append(change)
    return out


def _delete(records: RecordRepository, ids: Identities, commit: CommitInfo, change: ReportChange) -> bool:
    record = ids.lookup(records, change.slug)
    if record is None or not (ids.is_live(record) or record.state in KEPT_STATES):
        return False
    if record.state not in KEPT_STATES:  # a fixed report leaves devs/issues through perfbot's move PR: it stays
        records.set_state(record, DELETED)
    records.add_revision(record, RevisionInput(commit, change.path, DELETED, None, None, None, ()))
    ids.remember(records, record, change.slug, ids.content_hash(record), live=False)
    return True


def _write(records: RecordRepository, ids: Identities, commit: CommitInfo, change: ReportChange,
           reading: Reading, seen: frozenset[str], reread: bool = False) -> tuple[str, Record | None]:
    data, result = change.data or b"", reading.result
    named = reading.supersedes
    # Only `supersedes` is checked against history; a union with `seen` per report would copy it 10,000 times.
    findings = reading.findings(records.known_slugs(named) | seen if named else seen)
    content_hash = result.record.content_hash if result.record else hashlib.sha256(data).hexdigest()

    record = ids.lookup(records, change.old_slug) if change.kind == RENAMED and change.old_slug else None
    if record is not None and record.slug != change.slug:
        records.rename(record, change.slug, change.path)
    record = record or ids.lookup(records, change.slug)
    # An oversized report's text is not kept (an empty one stands for it): no retrieval index, reviewer or page
    # ever reads it back, while its findings reach its issue.
    text = "" if reading.oversized else data.decode("utf-8", errors="replace") if data else None
    if record is None and not ids.replay and records.never_named(change.slug):
        records.add_new(change.slug, RevisionInput(commit, change.path, ADDED, text, content_hash, result.record,
                                                   findings))
        # Only the merge rule needs the record itself, and only when the report supersedes another.
        superseding = result.record is not None and result.record.supersedes
        return ADDED, records.find_current(change.slug) if superseding else None
    if record is None:
        record, kind = records.create(change.slug, change.path), ADDED
    elif not ids.is_live(record):
        kind = RENAMED if change.kind == RENAMED else ADDED  # a deleted or merged report written again lives again
    elif change.kind != RENAMED and ids.content_hash(record) == content_hash and not reread:
        return "unchanged", None
    else:
        kind = RENAMED if change.kind == RENAMED else MODIFIED

    rev = RevisionInput(commit, change.path, kind, text, content_hash, result.record, findings)
    if reread and ids.content_hash(record) == content_hash and records.reads_as(record, rev):
        return "unchanged", None
    records.add_revision(record, rev)
    records.apply_facts(record, rev)
    if record.state not in LIVE_STATES | KEPT_STATES:
        records.set_state(record, LIVE)
    ids.remember(records, record, change.slug, content_hash, live=True, old_slug=change.old_slug)
    return kind, record
