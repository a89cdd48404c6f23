"""Dedup evaluation: retrieval recall@k and the offline reviewer's precision and recall on the labelled set,
and retrieval latency over 10,000 and 100,000 generated records.

Run: .venv/bin/python bench/dedup_eval.py [--sizes 10000 100000] [--queries 200]
Quality is printed for each labelled set side by side (reports in devs/issues/, pairs in pairs.json):
tests/data/dedup (in-sample: the reviewer was tuned on it), tests/data/dedup_tune (extra tuning pairs) and
tests/data/dedup_heldout (written blind, never tuned on). `--sizes` with no value skips the latency runs.
"""
from __future__ import annotations

import argparse
import json
import random
import statistics
import time
from pathlib import Path

from bot.core.offline_reviewer import OfflineReviewer
from bot.core.parse import parse
from bot.core.retrieval import RetrievalIndex
from bot.core.similarity import Features, features

DATA = Path(__file__).resolve().parent.parent / "tests" / "data" / "dedup"
SETS = {"in-sample": DATA, "tune": DATA.with_name("dedup_tune"), "held-out": DATA.with_name("dedup_heldout")}
OVERLAP = {"duplicate", "subsumes", "overlaps"}


def load_set(data: Path = DATA) -> tuple[dict, list[dict]]:
    records = {}
    for path in sorted((data / "devs" / "issues").glob("perf_*.md")):
        record = parse(f"devs/issues/{path.name}", path.read_bytes()).record
        records[record.slug] = record
    return records, json.loads((data / "pairs.json").read_text())


def quality_table(results: dict[str, dict]) -> list[str]:
    """The sets' figures side by side, one column per set, so in-sample and held-out are read together."""
    rows = [("reports", lambda r: str(r["reports"])),
            ("overlapping pairs", lambda r: str(r["overlapping_pairs"])),
            ("hard negatives", lambda r: str(r["hard_negatives"]))]
    rows += [(f"retrieval recall@{k}", lambda r, k=k: f"{r['recall_at_k'][k]:.2f}") for k in (1, 3, 5)]
    rows += [("reviewer precision", lambda r: f"{r['precision']:.2f}"),
             ("reviewer recall", lambda r: f"{r['recall']:.2f}"),
             ("tp / fp / fn", lambda r: f"{r['tp']} / {r['fp']} / {r['fn']}"),
             ("hard negatives flagged", lambda r: f"{r['hard_negatives_flagged']} of {r['hard_negatives']}")]
    names = list(results)
    lines = [f"{'':<24}" + "".join(f"{name:>12}" for name in names)]
    lines += [f"{label:<24}" + "".join(f"{cell(results[name]):>12}" for name in names) for label, cell in rows]
    return lines


def evaluate(records: dict, pairs: list[dict], ks=(1, 3, 5)) -> dict:
    """Recall@k: of the labelled overlapping pairs, how often retrieval for one side lists the other in its top k.

    Reviewer precision/recall: over every pair retrieval proposes (top 5 for each report) plus every
    labelled pair, overlapping (duplicate/subsumes/overlaps) is the positive class.
    """
    feats = {slug: features(r) for slug, r in records.items()}
    index = RetrievalIndex(list(feats.values()))
    tops = {slug: index.candidates(f, max(ks)) for slug, f in feats.items()}
    positives = [p for p in pairs if p["label"] in OVERLAP]
    recall = {}
    for k in ks:
        hits = sum(1 for p in positives for a, b in ((p["a"], p["b"]), (p["b"], p["a"]))
                   if b in [c.slug for c in tops[a][:k]]) / 2
        recall[k] = hits / len(positives)
    truth = {frozenset((p["a"], p["b"])): p["label"] in OVERLAP for p in pairs}
    reviewer = OfflineReviewer()
    judged: dict[frozenset, bool] = {}
    for slug, candidates in tops.items():
        for candidate in candidates:
            pair = frozenset((slug, candidate.slug))
            if pair not in judged:
                verdict = reviewer.review(records[slug], records[candidate.slug], candidate)
                judged[pair] = verdict.overlapping
    for pair in truth:  # labelled pairs retrieval missed are judged "distinct": a miss counts against recall
        judged.setdefault(pair, False)
    tp = sum(1 for pair, said in judged.items() if said and truth.get(pair, False))
    fp = sum(1 for pair, said in judged.items() if said and not truth.get(pair, False))
    fn = sum(1 for pair, real in truth.items() if real and not judged.get(pair, False))
    hard = [frozenset((p["a"], p["b"])) for p in pairs if p.get("hard_negative")]
    return {"reports": len(records), "overlapping_pairs": len(positives), "hard_negatives": len(hard),
            "recall_at_k": recall, "precision": tp / (tp + fp) if tp + fp else 1.0,
            "recall": tp / (tp + fn) if tp + fn else 1.0, "tp": tp, "fp": fp, "fn": fn,
            "hard_negatives_flagged": sum(1 for pair in hard if judged.get(pair))}


def generated(base: list[Features], n: int, rng: random.Random) -> list[Features]:
    """`n` records whose words, code shapes and places are drawn from the labelled set, recombined and varied."""
    vocab = sorted({w for f in base for w in f.words})
    shingle_pool = sorted({s for f in base for s in f.shingles})
    places = sorted({p for f in base for p in f.locations})
    out = []
    for i in range(n):
        seed = base[i % len(base)]
        words = list(seed.words) + rng.sample(vocab, min(len(vocab), 25))
        rng.shuffle(words)
        shingles = set(rng.sample(sorted(seed.shingles), max(1, len(seed.shingles) // 2))) if seed.shingles else set()
        shingles |= set(rng.sample(shingle_pool, min(len(shingle_pool), 20)))
        out.append(Features(f"perf_gen_{i:06d}", tuple(words[:120]), frozenset(shingles),
                            frozenset(rng.sample(places, min(len(places), 3)))))
    return out


def latency(base: list[Features], n: int, queries: int, rng: random.Random) -> dict:
    docs = generated(base, n, rng)
    started = time.perf_counter()
    index = RetrievalIndex(docs)
    build = time.perf_counter() - started
    timings = []
    for query in rng.sample(base, min(queries, len(base))) * max(1, queries // len(base)):
        began = time.perf_counter()
        index.candidates(query, 5)
        timings.append(time.perf_counter() - began)
    timings.sort()
    return {"n": n, "build": build, "p50": statistics.median(timings), "p99": timings[int(len(timings) * 0.99) - 1],
            "queries": len(timings)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="*", default=[10_000, 100_000])
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--sets", nargs="+", choices=list(SETS), default=list(SETS),
                        help="labelled sets to measure (leave held-out out while tuning)")
    args = parser.parse_args()
    results = {name: evaluate(*load_set(SETS[name])) for name in args.sets if (SETS[name] / "pairs.json").exists()}
    print("\n".join(quality_table(results)))
    records, _ = load_set()
    rng = random.Random(20261202)
    base = [features(r) for r in records.values()]
    print(f"{'records':>8} {'index build':>12} {'query p50':>10} {'query p99':>10}")
    for n in args.sizes:
        row = latency(base, n, args.queries, rng)
        print(f"{row['n']:>8} {row['build']:>11.1f}s {row['p50'] * 1000:>8.1f}ms {row['p99'] * 1000:>8.1f}ms")


if __name__ == "__main__":
    main()
