"""Dedup with the offline reviewer: retrieval, verdicts, the mechanical merge, the cache and the CLI."""
from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from bot.adapters.store.reviews.dedup_store import VerdictCache, not_duplicates, remember_not_duplicate
from bot.cli import main
from bot.core.dedup.offline_reviewer import OfflineReviewer, merge_reports
from bot.core.dedup.retrieval import RetrievalIndex
from bot.core.dedup.similarity import code_shape, features, locations
from bot.core.lint.rules import lint
from bot.core.reports.parse import parse
from bot.services.dedup.review import Dedup
from tests.reports import canonical_report

EXAMPLES = Path(__file__).resolve().parents[2] / "devs" / "issues"

U24 = """\
def mix(x):
  x = x ^ (x >> 12)
  x = x * 2935 + 11
  return x ^ (x >> 7)

def go(i, n, acc):
  if i == n:
    return acc
  else:
    return go(i + 1, n, acc ^ mix(i))"""


def record(slug: str, **kw):
    return parse(f"devs/issues/{slug}.md", canonical_report(slug, **kw).encode()).record


def u24_report(slug: str, title: str, cause: str):
    text = canonical_report(slug, title=title, root_cause=cause, ratio=120)
    text = text.replace(text[text.index("```bend\n") + 8:text.index("\n```", text.index("```bend"))], U24)
    return parse(f"devs/issues/{slug}.md", text.encode()).record


def test_code_shape_abstracts_names_and_numbers():
    assert code_shape("def f(x):\n  return x + 1", "language") == code_shape("def g(y):\n  return y + 7", "language")
    assert code_shape("int f(int x) { return x; }", "c") == code_shape("int g(int y) { return y; }", "c")


def test_locations_name_files_functions_and_concepts():
    found = locations("`interact_call` in runtime/c/ref.c boxes every u24 through an OPE node")
    assert {"fn:interact_call", "file:runtime/c/ref.c", "concept:u24", "concept:ope"} <= found


def test_retrieval_ranks_the_overlapping_report_first():
    haystack = [record(f"perf_other_{n}", title=f"Unrelated finding {n} about strings and sorting",
                       root_cause=f"String buffer {n} is copied on every append.") for n in range(6)]
    old = u24_report("perf_u24_mul_slow", "u24 multiply boxes every intermediate value",
                     "Every u24 operation is an OPE node on the heap: `interact_opx` allocates per step.")
    new = u24_report("perf_xorshift_slow", "xorshift over u24 boxes every intermediate value",
                     "Each shift is an OPE node; u24 values are boxed on the heap by `interact_opx`.")
    index = RetrievalIndex([features(r) for r in [*haystack, old]])
    top = index.candidates(features(new), 3)[0]
    assert top.slug == "perf_u24_mul_slow" and top.shape > 0.9 and "interact_opx" in " ".join(top.reasons)


def test_offline_reviewer_merges_overlaps_into_a_report_that_lints_clean():
    old = u24_report("perf_u24_mul_slow", "u24 multiply boxes values", "Every u24 operation is an OPE node.")
    new = u24_report("perf_u24_hash_slow", "u24 hashing boxes values", "Each u24 op allocates an OPE node.")
    dedup = Dedup([old], OfflineReviewer())
    [review] = dedup.review(new)
    assert review.verdict.kind in ("duplicate", "overlaps") and review.overlapping
    merged = review.verdict.merged_report
    assert "supersedes: [perf_u24_mul_slow]" in merged and review.verdict.merge_problems == ()
    findings = lint(parse("devs/issues/perf_u24_hash_slow.md", merged.encode()),
                    path="devs/issues/perf_u24_hash_slow.md", known_slugs=frozenset({"perf_u24_mul_slow"}))
    assert [f.rule for f in findings if f.is_error] == []
    assert merged.count("```bend") == 1  # the same program: kept once, not twice


def test_the_example_reports_are_all_distinct_and_merge_keeps_both_reproductions():
    examples = [parse(str(p), p.read_bytes()).record for p in sorted(EXAMPLES.glob("perf_*.md"))]
    reviews = Dedup(examples, OfflineReviewer()).review_all()
    assert reviews and [r for r in reviews if r.overlapping] == []
    merged = merge_reports(examples[0], examples[1])
    assert merged.count("```c") >= 2 and f"From `{examples[1].slug}`" in merged


def test_verdicts_are_cached_by_content_and_people_can_overrule(database):
    old = u24_report("perf_u24_mul_slow", "u24 multiply boxes values", "Every u24 operation is an OPE node.")
    new = u24_report("perf_u24_hash_slow", "u24 hashing boxes values", "Each u24 op allocates an OPE node.")

    class Counting(OfflineReviewer):
        calls = 0

        def review(self, *args):
            Counting.calls += 1
            return super().review(*args)

    cache = VerdictCache(database)
    first = Dedup([old], Counting(), cache).review(new)
    again = Dedup([old], Counting(), cache).review(new)
    assert Counting.calls == 1 and again[0].cached and again[0].verdict.kind == first[0].verdict.kind
    remember_not_duplicate(database, "team/runtime", "perf_u24_mul_slow", "perf_u24_hash_slow", "maintainer")
    overruled = Dedup([old], Counting(), cache, not_duplicates(database, "team/runtime")).review(new)
    assert overruled[0].overruled and not overruled[0].overlapping


def test_the_cli_exits_3_on_overlap_and_0_when_new(git_repo, tmp_path, monkeypatch):
    monkeypatch.setenv("PERFBOT_INSTANCE_DIR", str(tmp_path / "instance"))
    monkeypatch.delenv("PERFBOT_DATABASE_URL", raising=False)
    old = canonical_report("perf_u24_mul_slow", title="u24 multiply boxes values", root_cause="u24 OPE boxing.")
    git_repo.write("devs/issues/perf_u24_mul_slow.md", old).commit("old report")
    draft = tmp_path / "perf_u24_again.md"
    draft.write_text(old.replace("perf_u24_mul_slow", "perf_u24_again"))
    runner = CliRunner()
    result = runner.invoke(main, ["dedup", str(draft), "--repo", str(git_repo.root)])
    assert result.exit_code == 3 and "perf_u24_again vs perf_u24_mul_slow" in result.output
    as_json = json.loads(runner.invoke(main, ["dedup", str(draft), "--repo", str(git_repo.root),
                                              "--format", "json"]).output)
    assert as_json[0]["candidate"] == "perf_u24_mul_slow" and as_json[0]["cached"] is False  # a draft stores none
    assert {"score", "text", "shape", "locations", "verdict", "confidence", "reasons"} <= set(as_json[0])
    fresh = tmp_path / "perf_new.md"
    fresh.write_text(canonical_report("perf_new", track="par", backend="metal", threads=64, ratio=9.0,
                                      title="Metal scan stalls on barriers", root_cause="threadgroup barriers"))
    assert runner.invoke(main, ["dedup", str(fresh), "--repo", str(git_repo.root)]).exit_code in (0, 3)
    assert runner.invoke(main, ["dedup", "--repo", str(git_repo.root)]).exit_code == 2
    assert runner.invoke(main, ["dedup", "--all", "--repo", str(git_repo.root)]).exit_code == 0


def test_the_cli_compares_programs_fenced_with_the_repositorys_own_tag(git_repo, tmp_path, monkeypatch):
    monkeypatch.setenv("PERFBOT_INSTANCE_DIR", str(tmp_path / "instance"))
    monkeypatch.delenv("PERFBOT_DATABASE_URL", raising=False)
    old = canonical_report("perf_u24_mul_slow", title="u24 multiply boxes values", root_cause="u24 OPE boxing.")
    git_repo.write("devs/issues/perf_u24_mul_slow.md", old.replace("```bend", "```tally")).commit("old report")
    draft = tmp_path / "perf_u24_again.md"
    draft.write_text(old.replace("perf_u24_mul_slow", "perf_u24_again").replace("```bend", "```tally"))

    def shape() -> float:
        done = CliRunner().invoke(main, ["dedup", str(draft), "--repo", str(git_repo.root), "--format", "json"])
        return json.loads(done.output)[0]["shape"]

    assert shape() == 0  # no program on either side: only the words compare
    git_repo.write(".perfbot.toml", '[run]\nfence = ["tally"]\n').commit("declare the tag")
    assert shape() > 0.9
