"""A store seeded for the dashboard tests, rows inserted through the models (no tests here: the data they share)."""
from __future__ import annotations

from datetime import UTC, datetime, timedelta

from bot.adapters.store.engine import Database
from bot.adapters.store.models import Record, Repo, Revision, SlugAlias
from bot.adapters.store.service_models import (
    BenchRun,
    Bisection,
    DigestPost,
    Fix,
    LlmAnswer,
    PairOverride,
    PendingMerge,
    RecordEvent,
)
from bot.core.config import Milestone
from bot.core.lead.facts import CampaignFacts, FixFact
from bot.core.lead.milestones import RecordFact, RunFact, SidePoint
from bot.digest.model import build_digest
from bot.digest.render import render_digest

REPO = "acme/runtime"
T0 = datetime(2026, 5, 4, 9, 0, tzinfo=UTC)
HOSTILE_TITLE = "<script>alert('title')</script> boxed & broken"

REPORT = """---
track: seq
backend: c
ratio: 63.6
fix: fix/perf_boxed_sum-unbox
---
# Boxed sum allocates every intermediate

## Context
Summing `N` numbers boxes each partial sum.

## Reproduction
```bend
def main(): return sum(0, 1000000)
```
```c
int main(void) { long s = 0; for (long i = 0; i < 1000000; i++) s += i; return s & 1; }
```

## Measurements
| program | seconds |
| --- | --- |
| language | 0.0911 |
| C | 0.0014 |

## Root cause
`box_u24` in **runtime.c** allocates per step.

## Fix
Unbox the loop.
"""

HOSTILE_REPORT = """# <script>alert('heading')</script> boxed

<img src="https://cdn.example.com/x.png" onerror="alert('img')">
<script>alert('body')</script>

[a javascript link](javascript:alert('link')) and ![remote image](https://cdn.example.com/y.png)
"""

# (slug, state, track, backend, threads, ratio, title, errors, warnings, verdict)
RECORDS = [
    ("perf_boxed_sum", "open", "seq", "c", None, 63.6, "Boxed sum allocates every intermediate", 0, 1, "pass"),
    ("perf_mod_shift_subtract", "open", "seq", "c", None, 9.8, r"Modulo (`%`) is a shift-and-subtract loop in sum\_mod",
     1, 0, None),
    ("perf_par_sort", "open", "par", "metal", 8, 1.9, "Parallel sort stops scaling at 4 threads", 0, 0, "fail"),
    ("perf_float_boxing", "open", "seq", "cuda", None, 3.1, HOSTILE_TITLE, 0, 0, None),
    ("perf_closed_thing", "closed", "seq", "c", None, 2.5, "Closed by a person", 0, 0, None),
    ("perf_u24_arith_boxing", "fixed", "seq", "c", None, 4.2, "u24 arithmetic boxes", 0, 0, "pass"),
    ("perf_u24_old", "merged", "seq", "c", None, 4.0, "u24 boxing (old)", 0, 0, None),
]


def _samples(centre: float, count: int, wobble: float = 0.03) -> list[float]:
    return [round(centre * (1 + wobble * ((i * 7) % 5 - 2) / 2), 6) for i in range(count)]


def _side(label: str, sha: str, language: float, c: float, count: int, decision: str, par: bool = False) -> dict:
    names = ("one_thread_seconds", "n_threads_seconds") if par else ("language_seconds", "c_seconds")
    point = language / c
    return {"side": label, "sha": sha, names[0]: _samples(language, count), names[1]: _samples(c, count, 0.05),
            "interval": {"low": point * 0.93, "point": point, "high": point * 1.07}, "decision": decision,
            "output": "499999500000"}


def digest_body() -> str:
    """The week's digest as perfbot posts it to GitHub (the real renderer): its charts are mermaid source."""
    start, end = T0 - timedelta(days=7), T0
    records = (RecordFact("perf_boxed_sum", "Boxed sum", "seq", "c", None, 63.6, "open", None, None, start),
               RecordFact("perf_par_sort", "Par sort", "par", "metal", 8, 1.9, "open", None, None, start),
               RecordFact("perf_u24_arith_boxing", "u24", "seq", "c", None, 4.2, "fixed", None, None, start))
    runs = (RunFact(1, "perf_u24_arith_boxing", "mini-1", "fix", "done", "pass", 8, end - timedelta(days=1),
                    end - timedelta(days=1), (SidePoint("base", 4.2, 4.0, 4.4), SidePoint("head", 1.2, 1.1, 1.3)),
                    None),)
    fixes = (FixFact("perf_u24_arith_boxing", "fix/perf_u24_arith_boxing", 8, "pr", "merged", None,
                     end - timedelta(days=1), end - timedelta(hours=12)),)
    return render_digest(build_digest(CampaignFacts(REPO, records=records, runs=runs, fixes=fixes), start, end,
                                      (Milestone(name="seq reports near C", kind="seq-near-c"),), 2.0))


def seed(db: Database, *, hostile: bool = True) -> dict[str, int]:
    """Every kind of row the dashboard shows; returns ids by name (records by slug, runs as run_*). `hostile=False`
    gives perf_float_boxing a plain title and text, for the README's picture."""
    ids: dict[str, int] = {}
    with db.session() as session:
        repo = Repo(full_name=REPO, last_synced_commit="a" * 40, synced_at=T0)
        session.add(repo)
        session.flush()
        for n, (slug, state, track, backend, threads, ratio, title, errors, warnings, verdict) in enumerate(RECORDS):
            if slug == "perf_float_boxing" and not hostile:
                title = "Float boxing in the ray tracer's inner loop"
            record = Record(repo_id=repo.id, slug=slug, path=f"devs/issues/{slug}.md", state=state, title=title,
                            track=track, backend=backend, threads=threads, ratio=ratio, errors=errors,
                            warnings=warnings, verdict=verdict, content_hash=f"{n:064d}", supersedes=[],
                            fix="fix/perf_boxed_sum-unbox" if slug == "perf_boxed_sum" else "unknown",
                            created_at=T0 + timedelta(hours=n), updated_at=T0 + timedelta(days=1, hours=3 * n % 7))
            session.add(record)
            session.flush()
            ids[slug] = record.id
            session.add(SlugAlias(repo_id=repo.id, slug=slug, record_id=record.id))
            content = f"# {title}\n\nSome text about {slug}.\n"
            if slug == "perf_boxed_sum" or (slug == "perf_float_boxing" and hostile):
                content = REPORT if slug == "perf_boxed_sum" else HOSTILE_REPORT
            findings = [{"file": f"devs/issues/{slug}.md", "line": 12, "rule": "audit-repro-size",
                         "severity": "warning", "message": "the reproduction is over 60 lines",
                         "remedy": "cut it to the smallest program that still shows the gap"}] if warnings else []
            if errors:
                findings.append({"file": f"devs/issues/{slug}.md", "line": 30, "rule": "ratio-mismatch",
                                 "severity": "error", "message": "stated 9.8x, the table says 7.1x",
                                 "remedy": "set `ratio:` to what the table measures"})
            for k, change in enumerate(("added", "modified")):
                session.add(Revision(record_id=record.id, commit_sha=f"{n}{k}".ljust(40, "c"), author_name="agent-7",
                                     author_email="agent7@example.invalid", path=f"devs/issues/{slug}.md",
                                     committed_at=T0 + timedelta(hours=n, minutes=10 * k), change=change,
                                     content_hash=f"{n:063d}{k}", content=content, facts={},
                                     findings=findings if k else []))
        session.flush()
        old = session.get(Record, ids["perf_u24_old"])
        old.merged_into_id = ids["perf_u24_arith_boxing"]
        session.add_all([
            LlmAnswer(kind="dedup", content_hash=f"{5:064d}", partner_hash=f"{6:064d}", model="offline",
                      prompt_version="v1", slug="perf_u24_arith_boxing", partner_slug="perf_u24_old",
                      answer={"verdict": "duplicate", "confidence": 0.91,
                              "reasons": ["same root-cause places: u24"]}, created_at=T0),
            LlmAnswer(kind="dedup", content_hash=f"{3:064d}", partner_hash=f"{0:064d}", model="offline",
                      prompt_version="v1", slug="perf_float_boxing", partner_slug="perf_boxed_sum",
                      answer={"verdict": "overlaps", "confidence": 0.35,
                              "reasons": ["reproduction code of the same shape (MinHash Jaccard 0.48)"]},
                      created_at=T0),
            PairOverride(full_name=REPO, slug_a="perf_boxed_sum", slug_b="perf_mod_shift_subtract",
                         kind="not-duplicate", actor="lead", at=T0),
            Fix(full_name=REPO, slug="perf_boxed_sum", branch="fix/perf_boxed_sum-unbox", source="pr-body",
                state="open", head_sha="b" * 40, base_sha="a" * 40, pr_number=12, additions=40, deletions=12,
                changed_files=2, token_delta=-35, created_at=T0, updated_at=T0),
            Fix(full_name=REPO, slug="perf_u24_arith_boxing", branch="fix/perf_u24_arith_boxing", source="branch",
                state="merged", head_sha="d" * 40, additions=8, deletions=30, changed_files=1, token_delta=-120,
                created_at=T0, updated_at=T0),
            RecordEvent(record_id=ids["perf_u24_arith_boxing"], kind="fixed", actor="perfbot",
                        detail="fix merged with a passing verdict", at=T0),
        ])
        passing = {"verdict": "pass", "message": "language/C 1.14x", "runner": "mini-1",
                   "sides": [_side("base", "a" * 40, 0.0911, 0.0203, 6, "fail"),
                             _side("head", "b" * 40, 0.0209, 0.0184, 6, "pass")],
                   "suite": {"verdict": "pass", "tolerance": 0.05, "summary": "2 benchmarks, no regression",
                             "benchmarks": [{"name": "fib", "base_seconds": [1.0], "head_seconds": [0.99],
                                             "head_over_base": {"low": 0.97, "point": 0.99, "high": 1.01},
                                             "decision": "ok"}], "only_base": [], "only_head": []}}
        runs = [
            ("run_done", "perf_boxed_sum", "done", "pass", passing, {}, 1),
            # the claim checked on the default branch: the overview ranks by this measured ratio, not the claim
            ("run_reproduce", "perf_float_boxing", "done", "fail",  # the gap is there: the claim reproduced
             {"sides": [_side("head", "b" * 40, 0.0311, 0.0107, 6, "fail")]}, {}, 0),
            ("run_par", "perf_par_sort", "done", "fail",
             {"sides": [_side("head", "e" * 40, 0.8, 0.4, 5, "fail", par=True)]}, {}, 2),
            ("run_running", "perf_mod_shift_subtract", "running", "",
             {"sides": [_side("base", "a" * 40, 0.05, 0.005, 4, "")]}, {"side": "base", "taken": 4, "most": 30}, 3),
            ("run_queued", "perf_par_sort", "queued", "", {}, {}, 4),
            # what an error leaves: a side that failed before its first pair, and the reason in the message
            ("run_error", "perf_mod_shift_subtract", "done", "error",
             {"message": "the C translation does not compile: main.c:3: error: expected ';'",
              "sides": [{"side": "base", "sha": "a" * 40, "language_seconds": [], "c_seconds": [],
                         "interval": None, "decision": None}]}, {}, 5),
        ]
        for name, slug, status, verdict, result, progress, hour in runs:
            run = BenchRun(full_name=REPO, slug=slug, runner="mini-1" if status != "queued" else "", base_sha="a" * 40,
                           head_sha="b" * 40, verdict=verdict, message=result.get("message", status), result=result,
                           status=status, purpose="reproduce" if name == "run_reproduce" else "fix",
                           pr_number=12 if slug == "perf_boxed_sum" else None,
                           host="mini-1.lan" if status != "queued" else "", progress=progress,
                           created_at=T0 + timedelta(days=2, hours=hour),
                           started_at=T0 + timedelta(days=2, hours=hour) if status != "queued" else None,
                           finished_at=T0 + timedelta(days=2, hours=hour, minutes=5) if status == "done" else None)
            session.add(run)
            session.flush()
            ids[name] = run.id
        session.add(PendingMerge(full_name=REPO, number=14, keep="perf_boxed_sum", merged_from="perf_float_boxing",
                                 title="Merge perf_float_boxing into perf_boxed_sum", opened_by="offline",
                                 opened_at=T0 + timedelta(days=2)))
        session.add(Bisection(full_name=REPO, slug="perf_u24_arith_boxing", good_sha="a" * 40, bad_sha="f" * 40,
                              status="done", outcome="found", culprit_sha="9" * 40, message="first slow commit found",
                              steps=[{"sha": "c" * 40, "mark": "good"}, {"sha": "9" * 40, "mark": "bad"}],
                              requested_by="lead", options={}, created_at=T0, finished_at=T0 + timedelta(hours=1)))
        digest = DigestPost(full_name=REPO, week="2026-W19", window_start=T0 - timedelta(days=7), window_end=T0,
                            body=digest_body(),
                            summary={"new": 3, "fixes": 2, "stale": 1, "milestones": [
                                {"name": "seq reports near C", "done": 3, "total": 8, "met": False},
                                {"name": "par reports scaling", "done": 4, "total": 4, "met": True}]},
                            issue_number=40, created_at=T0)
        session.add(digest)
        session.flush()
        ids["digest"] = digest.id
        if not hostile:
            _story(session, repo.id)
    return ids


def _story(session, repo_id: int) -> None:
    """The README's picture also shows what the overview answers: an overstated claim, a mismatch never ranked, a
    reference report bisected to its culprit, and two fixes already in main, one that fixed and one only faster."""
    def record(slug: str, title: str, ratio: float, **facts) -> None:
        session.add(Record(repo_id=repo_id, slug=slug, path=f"devs/issues/{slug}.md", state="open", title=title,
                           track="seq", backend="c", ratio=ratio, errors=0, warnings=0, supersedes=[],
                           content_hash=slug.ljust(64, "0")[:64], created_at=T0, updated_at=T0, **facts))

    def run(slug: str, purpose: str, verdict: str, head: tuple, base: tuple | None = None, measure: str = "wall",
            against: dict | None = None, **extra) -> None:
        sides = [{"side": side, "sha": sha * 40, "language_seconds": [point * 0.01] * 5, "c_seconds": [0.01] * 5,
                  "interval": {"low": low, "point": point, "high": high}, "decision": decision, "measure": measure,
                  **(against or {})}
                 for side, sha, (low, point, high), decision in
                 ((("base", "e", base, "fail"),) if base else ()) + (("head", "f", head, verdict),)]
        session.add(BenchRun(full_name=REPO, slug=slug, runner="mini-1", base_sha="e" * 40 if base else None,
                             head_sha="f" * 40, verdict=verdict, message="", status="done", purpose=purpose,
                             result={"sides": sides, **extra}, host="mini-1.lan", created_at=T0 + timedelta(days=3),
                             started_at=T0 + timedelta(days=3), finished_at=T0 + timedelta(days=3, minutes=5)))

    record("perf_interp_dispatch", "Interpreter dispatch: every instruction through a switch", 517.0)
    run("perf_interp_dispatch", "reproduce", "fail", (138.0, 218.0, 361.0), measure="instructions")
    record("perf_tree_translation", "Tree sum 1016x slower than C", 1016.0)
    run("perf_tree_translation", "reproduce", "mismatch", (900.0, 1016.0, 1100.0))
    record("perf_mod_v1", "sum_mod slower than runtime v1", 1.3, reference="runtime@v1")
    run("perf_mod_v1", "reproduce", "fail", (1.21, 1.31, 1.42), against={"against": "runtime@v1", "factor": 1.1})
    session.add(Bisection(full_name=REPO, slug="perf_mod_v1", good_sha="a" * 40, bad_sha="f" * 40, status="done",
                          outcome="found", culprit_sha="7" * 40, message=f"introduced by {'7' * 12}; last good "
                          f"{'6' * 12}", steps=[], requested_by="lead", options={}, created_at=T0, finished_at=T0))
    record("perf_list_fold", "List fold boxes its accumulator", 170.0, fix="f9fb80b")
    run("perf_list_fold", "fix", "fail", (110.0, 118.0, 126.0), (160.0, 169.0, 178.0), in_main=True,
        gain={"low": 1.21, "point": 1.43, "high": 1.49})
