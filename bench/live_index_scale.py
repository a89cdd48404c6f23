"""What the push path's retrieval index costs at scale: a new process's first build from the store, a push
that changed nothing, and a push that changed one report, over N stored records.

Run: .venv/bin/python bench/live_index_scale.py [--records 10000 100000]
Records are generated as in bench/dedup_eval.py, their features stored as sync's first push leaves them;
the changed report is a real one from tests/data/dedup, parsed and lexed on the push as in production.
"""
from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

from sqlalchemy import insert, select, update

from bot.adapters.store.engine import Database
from bot.adapters.store.models import Record, Repo, Revision
from bot.adapters.store.reviews.retrieval_store import store_features
from bot.core.dedup.similarity import features
from bot.core.reports.parse import parse
from bot.services.dedup.live_index import LiveIndexes

sys.path.insert(0, str(Path(__file__).resolve().parent))
from dedup_eval import DATA, generated, load_set

KEY = "team/runtime"


def seeded_store(directory: Path, n: int) -> Database:
    records, _ = load_set()
    docs = generated([features(r) for r in records.values()], n, random.Random(n))
    db = Database(f"sqlite:///{directory / f'store_{n}.db'}")
    with db.session() as session:
        repo_id = session.execute(insert(Repo).values(key=KEY).returning(Repo.id)).scalar_one()
        session.execute(insert(Record), [{"repo_id": repo_id, "slug": d.slug, "path": f"devs/issues/{d.slug}.md",
                                          "state": "open", "content_hash": f"h{i:061d}"} for i, d in enumerate(docs)])
    store_features(db, {f"h{i:061d}": d for i, d in enumerate(docs)})
    return db


def change_one(db: Database, slug: str, text: str, round_: int) -> None:
    """What sync leaves after a push edited `slug`: a new revision and the record's new content hash."""
    content_hash = parse(f"devs/issues/{slug}.md", text.encode("utf-8")).record.content_hash
    with db.session() as session:
        record_id = session.scalar(select(Record.id).where(Record.slug == slug))
        session.execute(update(Record).where(Record.id == record_id).values(content_hash=content_hash))
        session.add(Revision(record_id=record_id, commit_sha=f"{round_:040d}", committed_at=datetime.now(UTC),
                             path=f"devs/issues/{slug}.md", change="modified", content_hash=content_hash,
                             content=text, facts={}, findings=[]))


def measure(n: int, rounds: int) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        db = seeded_store(Path(tmp), n)
        started = time.perf_counter()
        _, _, step = LiveIndexes().current(db, KEY)  # a new worker's first push
        first = time.perf_counter() - started
        assert step.parsed == 0 and step.built == n, step
        indexes = LiveIndexes()
        indexes.current(db, KEY)
        unchanged, changed = [], []
        report = sorted((DATA / "devs" / "issues").glob("perf_*.md"))[0].read_text()
        for round_ in range(rounds):
            began = time.perf_counter()
            indexes.current(db, KEY)
            unchanged.append(time.perf_counter() - began)
            change_one(db, f"perf_gen_{round_:06d}", f"{report}\nEdited in round {round_}.\n", round_)
            began = time.perf_counter()
            _, _, step = indexes.current(db, KEY)
            changed.append(time.perf_counter() - began)
            assert (step.replaced, step.parsed, step.built) == (1, 1, 0), step
        return {"first": first, "unchanged": statistics.median(unchanged), "changed": statistics.median(changed)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, nargs="*", default=[10_000, 100_000])
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    print(f"{'records':>8} {'new process: first push':>24} {'push, nothing changed':>22} "
          f"{'push, one report changed':>25}")
    for n in args.records:
        row = measure(n, args.rounds)
        print(f"{n:>8} {row['first']:>23.2f}s {row['unchanged'] * 1000:>20.1f}ms {row['changed'] * 1000:>23.1f}ms",
              flush=True)


if __name__ == "__main__":
    main()
