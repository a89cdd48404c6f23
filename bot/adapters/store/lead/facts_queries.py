"""A repository's campaign facts from the store, gathered in a few queries (one per table): what the digest, the
standings and the dashboard issue read."""
from __future__ import annotations

from datetime import datetime

from sqlalchemy import func, select
from sqlalchemy.orm import aliased

from bot.adapters.store.engine import Database
from bot.adapters.store.models import Record, Repo, Revision, SlugAlias
from bot.adapters.store.reviews.dedup_store import pair_verdicts
from bot.adapters.store.service_models import BenchRun, Bisection, Fix, LlmAnswer, RecordEvent
from bot.core.lead.facts import (
    BisectFact,
    CampaignFacts,
    EventFact,
    FixFact,
    RecordFact,
    RevisionFact,
    RunFact,
    SidePoint,
    VerdictFact,
)
from bot.core.verify.bench_view import side_rows
from bot.core.verify.run_parts import RunOptions, RunResult
from bot.core.verify.scaling import scaling_fact
from bot.core.verify.scaling_view import head_scaling
from bot.core.verify.vocabulary import Purpose, RunStatus, Test


def campaign_facts(db: Database, full_name: str, window_start: datetime, window_end: datetime) -> CampaignFacts:
    """Everything up to `window_end` (older facts too: ratios, staleness and milestones look back further)."""
    if window_start >= window_end:
        raise ValueError(f"the digest window is empty: {window_start.isoformat()} is not before "
                         f"{window_end.isoformat()}")
    with db.session() as session:
        repo_id = session.scalar(select(Repo.id).where(Repo.full_name == full_name))
        if repo_id is None:
            return CampaignFacts(full_name)
        into = aliased(Record)
        rows = session.execute(select(Record, into.slug).outerjoin(into, into.id == Record.merged_into_id)
                               .where(Record.repo_id == repo_id).order_by(Record.id)).all()
        measures = claim_measures(session, repo_id)
        records = tuple(RecordFact(r.slug, r.title or "", r.track, r.backend, r.threads, r.ratio, r.state, merged,
                                   r.reproduced, r.created_at, r.reference, r.fix, measures.get(r.id),
                                   r.errors or 0, r.id) for r, merged in rows)
        slug_of_id = {r.id: r.slug for r, _ in rows}
        # Runs and fixes name a record by the slug it had then; every former slug leads to its current one.
        current = {alias: slug_of_id[record_id] for alias, record_id in session.execute(
            select(SlugAlias.slug, SlugAlias.record_id).where(SlugAlias.repo_id == repo_id))}
        revisions = tuple(
            RevisionFact(slug_of_id[rev.record_id], rev.committed_at, rev.change, rev.author_name, rev.author_email,
                         sum(1 for f in rev.findings or [] if f.get("severity") == "error"),
                         rev.content_hash is not None)
            for rev in session.execute(
                select(Revision.record_id, Revision.committed_at, Revision.change, Revision.author_name,
                       Revision.author_email, Revision.findings, Revision.content_hash)
                .join(Record, Record.id == Revision.record_id)
                .where(Record.repo_id == repo_id, Revision.committed_at < window_end)
                .order_by(Revision.committed_at, Revision.id)))
        runs = tuple(run_fact(run, current.get(run.slug, run.slug)) for run in session.scalars(
            select(BenchRun).where(BenchRun.full_name == full_name, BenchRun.created_at < window_end)
            .order_by(BenchRun.id)))
        fixes = tuple(FixFact(current.get(f.slug, f.slug), f.branch, f.pr_number, f.source, f.state, f.token_delta,
                              f.created_at, f.updated_at, f.head_sha) for f in session.scalars(
            select(Fix).where(Fix.full_name == full_name, Fix.created_at < window_end).order_by(Fix.id)))
        events = tuple(EventFact(slug_of_id[e.record_id], e.kind, e.actor, e.at) for e in session.scalars(
            select(RecordEvent).join(Record, Record.id == RecordEvent.record_id)
            .where(Record.repo_id == repo_id, RecordEvent.at < window_end).order_by(RecordEvent.id)))
        # Verdicts are cached by content, not by repository: only those about this repository's texts count.
        texts = (select(Revision.content_hash).join(Record, Record.id == Revision.record_id)
                 .where(Record.repo_id == repo_id, Revision.content_hash.is_not(None)))
        verdicts = tuple(VerdictFact(current.get(p.new_slug, p.new_slug), current.get(p.old_slug, p.old_slug),
                                     p.verdict.kind, p.verdict.confidence) for p in pair_verdicts(
            session, LlmAnswer.content_hash.in_(texts), LlmAnswer.partner_hash.in_(texts),
            LlmAnswer.created_at < window_end))
        bisections = tuple(BisectFact(b.id, current.get(b.slug, b.slug), b.outcome or "", b.culprit_sha,
                                      b.message or "", b.good_sha, b.bad_sha, b.finished_at or b.created_at)
                           for b in session.scalars(select(Bisection).where(
                               Bisection.full_name == full_name, Bisection.created_at < window_end)
                               .order_by(Bisection.id)))
    return CampaignFacts(full_name, records, revisions, runs, fixes, events, verdicts, bisections)


def claim_measures(session, repo_id: int) -> dict[int, str]:
    """Record id -> the `measure:` its latest text states (what its claimed ratio is made of); absent: wall."""
    latest = (select(Revision.record_id, func.max(Revision.id).label("rev_id"))
              .where(Revision.content_hash.is_not(None)).group_by(Revision.record_id).subquery())
    rows = session.execute(select(Revision.record_id, Revision.facts).join(latest, latest.c.rev_id == Revision.id)
                           .join(Record, Record.id == Revision.record_id).where(Record.repo_id == repo_id))
    return {record_id: facts["measure"] for record_id, facts in rows
            if isinstance(facts, dict) and isinstance(facts.get("measure"), str)}


def run_fact(run: BenchRun, slug: str) -> RunFact:
    """A stored run as the core reads it: its sides' intervals, its fix's own gain, and where its head is."""
    result, options = RunResult.from_json(run.result), RunOptions.from_json(run.options)
    # each side by its own name (base, head), whatever input it measured
    sides = tuple(SidePoint(side.side, row.point, row.low, row.high, side.decision or None)
                  for row, side in zip(side_rows(result), result.sides, strict=False))
    gain = result.gain
    return RunFact(run.id, slug, run.runner, Purpose(run.purpose), RunStatus(run.status),
                   Test(run.verdict) if run.verdict else None, run.pr_number, run.created_at,
                   run.finished_at, sides, result.suite_verdict, scaling_fact(head_scaling(result)), run.head_sha,
                   run.base_sha, result.measure, (gain.low, gain.point, gain.high) if gain else None,
                   result.already_in_base or result.in_main or options.in_main, bool(result.noisy))
