"""Read-only queries behind the dashboard: counts, the filterable record table, one record with everything around it."""
from __future__ import annotations

from dataclasses import dataclass, fields

from sqlalchemy import func, or_, select
from sqlalchemy.orm import Session

from bot.adapters.store.bench.bench_store import to_run
from bot.adapters.store.bench.merge_store import as_dict as merge_dict
from bot.adapters.store.models import Record, Repo, Revision
from bot.adapters.store.queries import record_detail, record_summary
from bot.adapters.store.reviews.dedup_store import pair_verdicts
from bot.adapters.store.service_models import (
    BenchRun,
    Bisection,
    Fix,
    LlmAnswer,
    PairOverride,
    PendingMerge,
    RecordEvent,
)
from bot.core.lead.campaign import apart_key, rank_key
from bot.core.lead.standing import Standing
from bot.core.verify.bench_run import BenchRun as Run
from bot.core.verify.vocabulary import Outcome

STATES = ("open", "closed", "regressed", "fixed", "merged", "deleted")
# "measured" sorts by the standing's measured figure (core/lead/standing.py), never by the claim.
SORT_COLUMNS = {"slug": Record.slug, "measured": Record.ratio, "state": Record.state, "updated": Record.updated_at}
# Without `order`, each column sorts its useful way round: worst ratio and latest change on top.
NATURAL_ORDER = {"slug": "asc", "measured": "desc", "state": "asc", "updated": "desc"}
OUTCOMES = tuple(str(o) for o in Outcome)


@dataclass(frozen=True)
class TableQuery:
    """The record table's query parameters, already checked: unknown values never reach SQL."""

    state: str = "open"  # a state, or "all"
    track: str = ""
    backend: str = ""
    text: str = ""
    sort: str = "measured"
    order: str = "desc"
    outcome: str = ""  # an Outcome's word, or "" for any

    @classmethod
    def from_args(cls, args) -> TableQuery:
        state = args.get("state", "open")
        sort = args.get("sort", "measured") if args.get("sort") in SORT_COLUMNS else "measured"
        order = args.get("order") if args.get("order") in ("asc", "desc") else NATURAL_ORDER[sort]
        outcome = args.get("outcome", "")
        return cls(state=state if state in STATES or state == "all" else "open",
                   track=args.get("track", "")[:8], backend=args.get("backend", "")[:8],
                   text=" ".join(args.get("q", "").split())[:200], sort=sort, order=order,
                   outcome=outcome if outcome in OUTCOMES else "")


def overview(session: Session, *, recent: int = 10) -> dict:
    """What the overview shows besides the records' standings (core/lead/campaign.py counts and ranks those)."""
    runs = session.scalars(select(BenchRun).order_by(BenchRun.created_at.desc(), BenchRun.id.desc()).limit(recent))
    return {
        "unfinished_runs": session.scalar(select(func.count(BenchRun.id)).where(BenchRun.status != "done")) or 0,
        "merges": [merge_dict(m) | {"keep_id": record_id_of(session, m.full_name, m.keep)}
                   for m in session.scalars(select(PendingMerge).order_by(PendingMerge.number))],
        "runs": _with_records(session, [to_run(run) for run in runs]),
    }


def record_table(session: Session, query: TableQuery, standings: dict[tuple[str, str], Standing],
                 limit: int = 1000) -> list[dict]:
    """The filtered records, each with its standing; by measured figure, those without one last."""
    column = SORT_COLUMNS[query.sort]
    order = (column.asc() if query.order == "asc" else column.desc()).nulls_last()
    statement = select(Record, Repo.full_name).join(Repo, Repo.id == Record.repo_id).order_by(order, Record.slug,
                                                                                              Record.id)
    if query.state != "all":
        statement = statement.where(Record.state == query.state)
    if query.track:
        statement = statement.where(Record.track == query.track)
    if query.backend:
        statement = statement.where(Record.backend == query.backend)
    if query.text:
        # autoescape: a `%` or `_` typed into the box is a character to find, not a LIKE wildcard
        needle = query.text.lower()
        statement = statement.where(or_(func.lower(Record.slug).contains(needle, autoescape=True),
                                        func.lower(Record.title).contains(needle, autoescape=True)))
    rows = []
    for record, key in session.execute(statement.limit(limit)).all():
        standing = standings.get((key, record.slug))
        if query.outcome and not (standing and (str(standing.outcome) == query.outcome
                                                 or (query.outcome == "overstated" and standing.overstated))):
            continue  # "overstated" finds every overstated claim, fixed since or not: the overview's tile
        rows.append({**record_summary(record, key), "id": record.id, "standing": standing})
    if query.sort == "measured":
        measured = [r for r in rows if r["standing"] and r["standing"].ranked_figure is not None]
        measured.sort(key=lambda row: rank_key(row["standing"]), reverse=query.order == "asc")
        # those without a valid measurement after, in the ranking's order for them: never by their claim
        apart = sorted((r for r in rows if not (r["standing"] and r["standing"].ranked_figure is not None)),
                       key=lambda row: apart_key(row["standing"]) if row["standing"] else ("", row["slug"]))
        rows = measured + apart
    return rows


def choices(session: Session) -> dict[str, list[str]]:
    """The tracks and backends present, for the filter's drop-downs."""
    return {"tracks": sorted(t for t in session.scalars(select(Record.track).distinct()) if t),
            "backends": sorted(b for b in session.scalars(select(Record.backend).distinct()) if b)}


def record_id_of(session: Session, full_name: str, slug: str) -> int | None:
    return session.scalar(select(Record.id).join(Repo, Repo.id == Record.repo_id)
                          .where(Repo.full_name == full_name, Record.slug == slug))


def record_page(session: Session, record_id: int, *, runs: int = 20) -> dict | None:
    """A record as the dashboard shows it: facts, text, findings, history, verdicts, fixes, runs, merges, bisections."""
    found = session.execute(select(Record, Repo.full_name).join(Repo, Repo.id == Record.repo_id)
                            .where(Record.id == record_id)).first()
    if found is None:
        return None
    record, key = found
    detail = record_detail(session, record, key)
    detail["id"] = record.id
    detail["content"] = session.scalar(
        select(Revision.content).where(Revision.record_id == record.id, Revision.content.is_not(None))
        .order_by(Revision.committed_at.desc(), Revision.id.desc()).limit(1))
    detail["merged_into_id"] = record.merged_into_id
    slugs = detail["aliases"] or [record.slug]
    detail["verdicts"] = _verdicts(session, slugs, record.content_hash)
    detail["overrides"] = [
        {"a": o.slug_a, "b": o.slug_b, "kind": o.kind, "actor": o.actor, "at": o.at}
        for o in session.scalars(select(PairOverride).where(
            PairOverride.full_name == key, or_(PairOverride.slug_a.in_(slugs), PairOverride.slug_b.in_(slugs))))]
    detail["fixes"] = [
        {"branch": f.branch, "pr": f.pr_number, "state": f.state, "source": f.source, "head": f.head_sha,
         "additions": f.additions, "deletions": f.deletions, "files": f.changed_files, "tokens": f.token_delta,
         "updated": f.updated_at}
        for f in session.scalars(select(Fix).where(Fix.full_name == key, Fix.slug.in_(slugs)).order_by(Fix.id))]
    detail["runs"] = [to_run(r) for r in session.scalars(
        select(BenchRun).where(BenchRun.full_name == key, BenchRun.slug.in_(slugs))
        .order_by(BenchRun.created_at.desc(), BenchRun.id.desc()).limit(runs))]
    detail["merges"] = [merge_dict(m) for m in session.scalars(select(PendingMerge).where(
        PendingMerge.full_name == key, or_(PendingMerge.keep.in_(slugs), PendingMerge.merged_from.in_(slugs)))
        .order_by(PendingMerge.number))]
    detail["bisections"] = [
        {"id": b.id, "status": b.status, "outcome": b.outcome, "good": b.good_sha, "bad": b.bad_sha,
         "culprit": b.culprit_sha, "message": b.message, "steps": len(b.steps or []), "by": b.requested_by,
         "at": b.created_at, "finished": b.finished_at}
        for b in session.scalars(select(Bisection).where(Bisection.full_name == key, Bisection.slug.in_(slugs))
                                 .order_by(Bisection.id.desc()))]
    detail["events"] = [
        {"kind": e.kind, "actor": e.actor, "detail": e.detail, "at": e.at}
        for e in session.scalars(select(RecordEvent).where(RecordEvent.record_id == record.id)
                                 .order_by(RecordEvent.at.desc(), RecordEvent.id.desc()))]
    return detail


def _verdicts(session: Session, slugs: list[str], current_hash: str | None) -> list[dict]:
    """Verdicts naming this report on either side, newest first; `current` when made on today's content."""
    pairs = pair_verdicts(session, or_(LlmAnswer.slug.in_(slugs), LlmAnswer.partner_slug.in_(slugs)),
                          newest_first=True, limit=50)
    verdicts, seen = [], set()
    for pair in pairs:
        mine_new = pair.new_slug in slugs
        judged = pair.new_hash if mine_new else pair.old_hash
        v = pair.verdict
        row = {"partner": pair.old_slug if mine_new else pair.new_slug, "kind": v.kind,
               "confidence": v.confidence, "reviewer": v.reviewer, "reasons": list(v.reasons),
               "at": pair.at, "current": current_hash is not None and judged == current_hash}
        said = (row["partner"], row["kind"], row["confidence"], row["reviewer"], row["current"])
        if said not in seen:  # the same pair judged the same way again (either side asked): one row, the newest
            seen.add(said)
            verdicts.append(row)
    return verdicts


def partner_ids(session: Session, full_name: str, slugs: list[str]) -> dict[str, int]:
    if not slugs:
        return {}
    return dict(session.execute(select(Record.slug, Record.id).join(Repo, Repo.id == Record.repo_id)
                                .where(Repo.full_name == full_name, Record.slug.in_(slugs))).all())


@dataclass(frozen=True)
class RunOnPage(Run):
    """A bench run as the dashboard links it: with its record's id (None when the record is gone), and on the
    run's own page the record's thread count and title."""

    record_id: int | None = None
    threads: int | None = None
    title: str = ""


def _on_page(run: Run, record_id: int | None, threads: int | None = None, title: str = "") -> RunOnPage:
    return RunOnPage(**{f.name: getattr(run, f.name) for f in fields(run)}, record_id=record_id, threads=threads,
                     title=title)


def run_page(session: Session, run_id: int) -> RunOnPage | None:
    run = session.get(BenchRun, run_id)
    if run is None:
        return None
    found = session.execute(select(Record.id, Record.threads, Record.title).join(Repo, Repo.id == Record.repo_id)
                            .where(Repo.full_name == run.full_name, Record.slug == run.slug)).first()
    return _on_page(to_run(run), record_id=found.id if found else None, threads=found.threads if found else None,
                    title=found.title if found else "")


def run_list(session: Session, limit: int = 100) -> list[RunOnPage]:
    runs = session.scalars(select(BenchRun).order_by(BenchRun.created_at.desc(), BenchRun.id.desc()).limit(limit))
    return _with_records(session, [to_run(r) for r in runs])


def _with_records(session: Session, runs: list[Run]) -> list[RunOnPage]:
    """Each run with the id of its record (None when the record is gone), for links from run tables."""
    slugs = {run.slug for run in runs}
    found = session.execute(select(Repo.full_name, Record.slug, Record.id).join(Repo, Repo.id == Record.repo_id)
                            .where(Record.slug.in_(slugs))).all() if slugs else []
    ids = {(key, slug): record_id for key, slug, record_id in found}
    return [_on_page(run, record_id=ids.get((run.repo, run.slug))) for run in runs]
