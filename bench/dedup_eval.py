"""Dedup evaluation: retrieval recall@k and the offline reviewer's precision and recall on each labelled set,
and retrieval's index build time, query latency and memory over 10,000 and 100,000 generated records, for
the index before issue 16 (bench/retrieval_before.py) and the current one side by side.

Run: .venv/bin/python bench/dedup_eval.py [--sizes 10000 100000] [--queries 200] [--no-before] [--sets ...]
Quality is printed for each labelled set side by side (reports in devs/issues/, pairs in pairs.json):
tests/data/dedup (in-sample: the reviewer was tuned on it), tests/data/dedup_tune (extra tuning pairs, agent-style
ones among them; the confidence model is fitted on these two only) and the held-out sets tests/data/dedup_heldout,
dedup_heldout_agents and dedup_heldout_blind (never tuned on; a set not yet written is skipped). While changing the
reviewer, run `--sets in-sample tune` only. `--sizes` with no value skips the latency runs.
Each size and index is measured in a forked process of its own, so the memory figure (resident set growth
while building) is that index's alone.
"""
from __future__ import annotations

import argparse
import json
import multiprocessing
import random
import re
import statistics
import sys
import time
from pathlib import Path

from bot.core.dedup.confidence import fit
from bot.core.dedup.offline_reviewer import OfflineReviewer, pair_features
from bot.core.dedup.retrieval import RetrievalIndex
from bot.core.dedup.similarity import Features, features
from bot.core.reports.parse import parse

sys.path.insert(0, str(Path(__file__).resolve().parent))
import retrieval_before

INDEXES = {"before": retrieval_before.RetrievalIndex, "now": RetrievalIndex}
DATA = Path(__file__).resolve().parent.parent / "tests" / "data" / "dedup"
SETS = {"in-sample": DATA, "tune": DATA.with_name("dedup_tune"), "held-out": DATA.with_name("dedup_heldout"),
        "held-out-agents": DATA.with_name("dedup_heldout_agents"),
        "held-out-blind": DATA.with_name("dedup_heldout_blind")}  # measured once it exists
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
             ("hard negatives flagged", lambda r: f"{r['hard_negatives_flagged']} of {r['hard_negatives']}"),
             ("P(overlap) true: min/med", lambda r: _spread(r["p_true"], min)),
             ("P(overlap) hard neg: max", lambda r: f"{max(r['p_hard'], default=0):.2f}"),
             ("merges over 500 words", lambda r: f"{r['merges_over']} of {r['merges']}")]
    names = list(results)
    lines = [f"{'':<26}" + "".join(f"{name:>16}" for name in names)]
    lines += [f"{label:<26}" + "".join(f"{cell(results[name]):>16}" for name in names) for label, cell in rows]
    return lines




def _spread(values: list[float], low) -> str:
    return f"{low(values):.2f}/{statistics.median(values):.2f}" if values else "-"


def evaluate(records: dict, pairs: list[dict], ks=(1, 3, 5), index_class=RetrievalIndex, reviewer=None) -> dict:
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
    reviewer = reviewer or OfflineReviewer()
    judged: dict[frozenset, bool] = {}
    likely: dict[frozenset, float] = {}  # the verdict's confidence turned into P(overlap)
    merges: list[int] = []  # prose words of each merged report proposed
    for slug, candidates in tops.items():
        for candidate in candidates:
            pair = frozenset((slug, candidate.slug))
            if pair not in judged:
                verdict = reviewer.review(records[slug], records[candidate.slug], candidate)
                judged[pair] = verdict.overlapping
                likely[pair] = verdict.confidence if verdict.overlapping else 1 - verdict.confidence
                if verdict.merged_report:
                    merged = parse(f"devs/issues/{slug}.md", verdict.merged_report.encode()).record
                    merges.append(merged.prose_words if merged else 0)
    for pair in truth:  # labelled pairs retrieval missed are judged "distinct": a miss counts against recall
        judged.setdefault(pair, False)
    tp = sum(1 for pair, said in judged.items() if said and truth.get(pair, False))
    fp = sum(1 for pair, said in judged.items() if said and not truth.get(pair, False))
    fn = sum(1 for pair, real in truth.items() if real and not judged.get(pair, False))
    hard = [frozenset((p["a"], p["b"])) for p in pairs if p.get("hard_negative")]
    return {"reports": len(records), "overlapping_pairs": len(positives), "hard_negatives": len(hard),
            "recall_at_k": recall, "precision": tp / (tp + fp) if tp + fp else 1.0,
            "recall": tp / (tp + fn) if tp + fn else 1.0, "tp": tp, "fp": fp, "fn": fn,
            "hard_negatives_flagged": sum(1 for pair in hard if judged.get(pair)),
            "p_true": sorted(likely[frozenset((p["a"], p["b"]))] for p in positives
                             if frozenset((p["a"], p["b"])) in likely),
            "p_hard": sorted(likely[pair] for pair in hard if pair in likely),
            "merges": len(merges), "merges_over": sum(words > 500 for words in merges)}


class OracleDouble:
    """The agent reviewer, through the Messages API double of tests/anthropic_double, whose answers are the labels.

    No model is asked: the double cannot judge. What this measures is what the agent path keeps of a reviewer
    that is always right: the pairs retrieval hands it, and the merged reports that pass the lint check
    (a merge that fails twice goes to people and counts as missed)."""

    def __init__(self, records: dict, pairs: list[dict]) -> None:
        sys.path.insert(0, str(DATA.parents[2]))
        from bot.adapters.reviewer_agent import AgentReviewer
        from bot.core.dedup.offline_reviewer import merge_reports
        from tests.anthropic_double import AnthropicDouble

        labels = {frozenset((p["a"], p["b"])): p["label"] for p in pairs}

        def answer(body: dict) -> dict:
            new, old = re.findall(r"(?:NEW|OLD) report `(perf_\w+)`", body["messages"][0]["content"])[:2]
            label = labels.get(frozenset((new, old)), "distinct")
            if label == "distinct":
                return {"verdict": "distinct", "confidence": 0.9, "reasons": ["labelled distinct"]}
            return {"verdict": label, "confidence": 0.9, "reasons": [f"labelled {label}"],
                    "merged_report": merge_reports(records[new], records[old])}

        self.double = AnthropicDouble().start()
        self.double.responder = answer
        self.reviewer = AgentReviewer(self.double.api_key, "claude-sonnet-4-6", base_url=self.double.url)

    def review(self, new, old, candidate):
        return self.reviewer.review(new, old, candidate)

    def close(self) -> None:
        self.double.stop()


def evaluate_with_double(records: dict, pairs: list[dict]) -> dict:
    oracle = OracleDouble(records, pairs)
    try:
        return evaluate(records, pairs, reviewer=oracle)
    finally:
        oracle.close()


TRAINING = ("in-sample", "tune")  # the only sets the reviewer's constants may be fitted on


def judged_pairs(records: dict, pairs: list[dict], k: int = 5) -> list[tuple]:
    """(new, old, candidate, overlapping?) for every pair retrieval proposes (top k per report) and every labelled
    pair it scored at all: the population the reviewer decides on."""
    feats = {slug: features(r) for slug, r in records.items()}
    index = RetrievalIndex(list(feats.values()))
    truth = {frozenset((p["a"], p["b"])): p["label"] in OVERLAP for p in pairs}
    seen: dict[frozenset, tuple] = {}
    for slug, f in feats.items():
        for rank, candidate in enumerate(index.candidates(f, len(records))):
            pair = frozenset((slug, candidate.slug))
            if (rank < k or pair in truth) and pair not in seen:
                seen[pair] = (records[slug], records[candidate.slug], candidate, truth.get(pair, False))
    return list(seen.values())


def fit_confidence() -> tuple[float, ...]:
    """The confidence model's weights, fitted on the training sets only."""
    rows = []
    for name in TRAINING:
        for new, old, candidate, label in judged_pairs(*load_set(SETS[name])):
            rows.append((pair_features(new, old, candidate), label))
    return fit(rows)


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
    parser.add_argument("--double", action="store_true",
                        help="judge with the agent reviewer through the Messages API double, scripted with the labels")
    parser.add_argument("--fit", action="store_true",
                        help="fit the offline reviewer's confidence model on the training sets and print its weights")
    args = parser.parse_args()
    present = [name for name in args.sets if (SETS[name] / "pairs.json").exists()]
    if args.double:
        results = {name: evaluate_with_double(*load_set(SETS[name])) for name in present}
        print("agent reviewer through the double, answering the labels:")
        print("\n".join(quality_table(results)))
        return
    if args.fit:
        print("WEIGHTS =", fit_confidence())
        return
    kinds = ["now"] if args.no_before else ["before", "now"]
    results = {name: evaluate(*load_set(SETS[name])) for name in present}
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
