"""Dedup evaluation: retrieval recall@k and the offline reviewer's precision and recall on each labelled set,
and retrieval's index build time, query latency and memory over 10,000 and 100,000 generated records, for
the index before issue 16 (bench/retrieval_before.py) and the current one side by side.

Run: .venv/bin/python bench/dedup_eval.py [--sizes 10000 100000] [--queries 200] [--no-before] [--sets ...]
Quality is printed for each labelled set side by side (reports in devs/issues/, pairs in pairs.json):
tests/data/dedup (in-sample: the reviewer was tuned on it), tests/data/dedup_tune (extra tuning pairs) and
tests/data/dedup_heldout (written blind, never tuned on). `--sizes` with no value skips the latency runs.
Each size and index is measured in a forked process of its own, so the memory figure (resident set growth
while building) is that index's alone.
"""
from __future__ import annotations

import argparse
import json
import multiprocessing
import random
import statistics
import sys
import time
from pathlib import Path

from bot.core.dedup.offline_reviewer import OfflineReviewer
from bot.core.dedup.retrieval import RetrievalIndex
from bot.core.dedup.similarity import Features, features
from bot.core.reports.parse import parse

sys.path.insert(0, str(Path(__file__).resolve().parent))
import retrieval_before

INDEXES = {"before": retrieval_before.RetrievalIndex, "now": RetrievalIndex}
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




def evaluate(records: dict, pairs: list[dict], ks=(1, 3, 5), index_class=RetrievalIndex) -> dict:
    """Recall@k: of the labelled overlapping pairs, how often retrieval for one side lists the other in its top k.

    Reviewer precision/recall: over every pair retrieval proposes (top 5 for each report) plus every
    labelled pair, overlapping (duplicate/subsumes/overlaps) is the positive class.
    """
    feats = {slug: features(r) for slug, r in records.items()}
    index = index_class(list(feats.values()))
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


def _resident_bytes() -> int:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * 4096


def _percentiles(timings: list[float]) -> tuple[float, float]:
    timings = sorted(timings)
    return statistics.median(timings), timings[max(0, int(len(timings) * 0.99) - 1)]


def _measure(kind: str, base: list[Features], n: int, queries: int, seed: int, out) -> None:
    rng = random.Random(seed)
    docs = generated(base, n, rng)
    asked = rng.sample(base, min(queries, len(base))) * max(1, queries // len(base))
    before = _resident_bytes()
    started = time.perf_counter()
    index = INDEXES[kind](docs)
    row = {"build": time.perf_counter() - started, "memory": _resident_bytes() - before}
    timings = []
    for query in asked:
        began = time.perf_counter()
        index.candidates(query, 5)
        timings.append(time.perf_counter() - began)
    row["p50"], row["p99"] = _percentiles(timings)
    if kind == "now":  # what a push costs: change one record, then ask (the query's caches are cold)
        changes, after = [], []
        for i, query in enumerate(asked):
            began = time.perf_counter()
            index.add(docs[rng.randrange(n)]) if i % 2 else index.remove(docs[i].slug)
            changes.append(time.perf_counter() - began)
            began = time.perf_counter()
            index.candidates(query, 5)
            after.append(time.perf_counter() - began)
        row["change_p50"], row["change_p99"] = _percentiles(changes)
        row["after_p50"], row["after_p99"] = _percentiles(after)
    out.send(row)


def latency(base: list[Features], n: int, queries: int, seed: int, kind: str) -> dict:
    ours, theirs = multiprocessing.get_context("fork").Pipe()
    child = multiprocessing.get_context("fork").Process(target=_measure, args=(kind, base, n, queries, seed, theirs))
    child.start()
    row = ours.recv()
    child.join()
    return {"n": n, "kind": kind, **row}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="*", default=[10_000, 100_000])
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--no-before", action="store_true", help="Measure only the current index.")
    parser.add_argument("--sets", nargs="+", choices=list(SETS), default=list(SETS),
                        help="labelled sets to measure (leave held-out out while tuning)")
    args = parser.parse_args()
    kinds = ["now"] if args.no_before else ["before", "now"]
    results = {name: evaluate(*load_set(SETS[name])) for name in args.sets if (SETS[name] / "pairs.json").exists()}
    print("\n".join(quality_table(results)))
    records, pairs = load_set()
    for kind in kinds:  # both indexes must find the same candidates on the in-sample set
        recall = evaluate(records, pairs, index_class=INDEXES[kind])["recall_at_k"]
        print(f"retrieval recall@k, in-sample ({kind:>6}): " + ", ".join(f"@{k} {v:.2f}" for k, v in recall.items()))
    base = [features(r) for r in records.values()]
    print(f"{'records':>8} {'index':>6} {'build':>8} {'memory':>9} {'query p50':>10} {'query p99':>10} "
          f"{'change p50/p99':>15} {'query after change p50/p99':>27}")
    for n in args.sizes:
        for kind in kinds:
            row = latency(base, n, args.queries, 20261202 + n, kind)
            change = after = ""
            if "change_p50" in row:
                change = f"{row['change_p50'] * 1000:.2f}/{row['change_p99'] * 1000:.2f}ms"
                after = f"{row['after_p50'] * 1000:.1f}/{row['after_p99'] * 1000:.1f}ms"
            print(f"{n:>8} {kind:>6} {row['build']:>7.1f}s {row['memory'] / 2**20:>7.0f}MB "
                  f"{row['p50'] * 1000:>8.1f}ms {row['p99'] * 1000:>8.1f}ms {change:>15} {after:>27}", flush=True)


if __name__ == "__main__":
    main()
