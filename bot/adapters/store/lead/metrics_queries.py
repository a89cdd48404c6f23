"""What /metrics reads from the store at scrape time: jobs by event and status, LLM token use, bench time."""
from __future__ import annotations

from sqlalchemy import func, select

from bot.adapters.store.engine import Database
from bot.adapters.store.reviews.llm_cache import KINDS, token_totals
from bot.adapters.store.service_models import BenchRun, Delivery


def jobs_by_status(db: Database) -> list[tuple[str, str, int]]:
    """(event, status, count) of every stored delivery."""
    with db.session() as session:
        rows = session.execute(select(Delivery.event, Delivery.status, func.count())
                               .group_by(Delivery.event, Delivery.status)).all()
    return sorted((event, status, count) for event, status, count in rows)


def token_usage(db: Database, keys: tuple[str, ...]) -> dict[tuple[str, str], int]:
    """(source, usage key) -> tokens summed over the cached LLM answers of each kind (verdicts, audits, facts)."""
    totals = token_totals(db)
    return {(kind, key): totals.get(kind, {}).get(key, 0) for kind in KINDS for key in keys}


def bench_time(db: Database) -> tuple[dict[tuple[str, str], tuple[float, int]], list[tuple[str, int]]]:
    """(runner, verdict) -> (seconds measured, finished runs), and (status, count) of unfinished runs."""
    sums: dict[tuple[str, str], list] = {}
    with db.session() as session:
        finished = session.execute(select(BenchRun.runner, BenchRun.verdict, BenchRun.started_at,
                                          BenchRun.finished_at).where(BenchRun.finished_at.is_not(None))).all()
        waiting = session.execute(select(BenchRun.status, func.count()).where(BenchRun.status != "done")
                                  .group_by(BenchRun.status)).all()
    for runner, verdict, started, ended in finished:
        entry = sums.setdefault((runner or "-", verdict or "-"), [0.0, 0])
        # A run finished without starting (cancelled while queued) spent no bench time.
        entry[0] += max((ended - started).total_seconds(), 0.0) if started is not None and ended is not None else 0.0
        entry[1] += 1
    return {labels: (total, count) for labels, (total, count) in sums.items()}, sorted(waiting)
