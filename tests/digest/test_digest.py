"""The weekly digest over a store seeded with a month of a team's activity, on SQLite and PostgreSQL: every
section's exact contents, the milestone arithmetic, the window's edges, and markdown untrusted text cannot break."""
from __future__ import annotations

import hashlib
import re
from datetime import UTC, date, datetime, timedelta

import pytest
from sqlalchemy import select

from bot.adapters.store.models import Record, Repo, Revision, SlugAlias
from bot.adapters.store.service_models import BenchRun, Fix, LlmAnswer, RecordEvent
from bot.core.config import Milestone, parse_repo_config
from bot.core.lead.facts import CampaignFacts, FixFact, RecordFact
from bot.core.lead.milestones import Failing, RunFact, SidePoint
from bot.core.tracker.untrusted import cell, title_cell
from bot.core.verify.vocabulary import Outcome
from bot.digest.model import build_digest
from bot.digest.render import make_digest, mermaid_label, render_digest

REPO = "team/runtime"
SEQ = ("seq-agent", "seq@agents.invalid")
PAR = ("par-agent", "par@agents.invalid")
GPU = ("gpu | agent", "gpu@agents.invalid")  # an author name with a pipe: it must not split a table row
ADA = ("Ada Lovelace", "ada@team.invalid")


def at(day: int, hour: int = 9, minute: int = 0) -> datetime:
    return datetime(2026, 11, day, hour, minute, tzinfo=UTC)


START, END = at(23), at(30)  # the week the digest covers: Monday 09:00 to Monday 09:00

CONFIG = parse_repo_config("""\
[verify]
seq_threshold = 2.0

[[milestones]]
name = "every seq report at or under 2x"
kind = "seq-near-c"

[[milestones]]
name = "metal seq under 3x"
kind = "seq-near-c"
backend = "metal"
threshold = 3.0

[[milestones]]
name = "cuda seq near C"
kind = "seq-near-c"
backend = "cuda"

[[milestones]]
name = "par scaling: 6x"
kind = "par-speedup"
reports = ["perf_fib_par", "perf_vec_par", "perf_gpu_matmul", "perf_missing"]
target = 6.0
due = 2026-11-27

[[milestones]]
name = "suite passes on cuda-box"
kind = "suite-passes"
runner = "cuda-box"

[[milestones]]
name = "suite passes on mini"
kind = "suite-passes"
runner = "mini"
due = 2026-12-31

[digest]
timezone = "UTC"
""")


class Seed:
    """Rows as sync, the bench flow, the fix flow, people and the reviewer would have written them."""

    def __init__(self, session, key: str = REPO) -> None:
        self.session = session
        self.repo = Repo(full_name=key)
        session.add(self.repo)
        session.flush()

    def report(self, slug: str, title: str, track: str, backend: str, ratio: float, when: datetime, author,
               *, threads: int | None = None, state: str = "open", errors: int = 0,
               reproduced: str | None = None) -> Record:
        record = Record(repo_id=self.repo.id, slug=slug, path=f"devs/issues/{slug}.md", state=state, title=title,
                        track=track, backend=backend, threads=threads, ratio=ratio, supersedes=[], errors=errors,
                        created_at=when, updated_at=when, reproduced=reproduced)
        self.session.add(record)
        self.session.flush()
        self.session.add(SlugAlias(repo_id=self.repo.id, slug=slug, record_id=record.id))
        self.revise(record, when, author, errors=errors, change="added")
        return record

    def revise(self, record: Record, when: datetime, author, *, errors: int = 0, change: str = "modified") -> str:
        content_hash = hashlib.sha256(f"{record.slug} {when.isoformat()}".encode()).hexdigest()
        finding = {"file": record.path, "line": 1, "rule": "ratio-missing", "severity": "error", "message": "m",
                   "remedy": "r"}
        warning = dict(finding, rule="audit-runs", severity="warning")
        self.session.add(Revision(
            record_id=record.id, commit_sha=content_hash[:40], author_name=author[0], author_email=author[1],
            committed_at=when, path=record.path, change=change,
            content_hash=None if change in ("deleted", "merged") else content_hash, content=None, facts={},
            findings=[] if change in ("deleted", "merged") else [finding] * errors + [warning]))
        record.updated_at = when
        self.session.flush()
        return content_hash

    def merge(self, record: Record, into: Record, when: datetime, author) -> None:
        record.state, record.merged_into_id = "merged", into.id
        self.revise(record, when, author, change="merged")

    def run(self, slug: str, purpose: str, verdict: str, finished: datetime, *, runner: str = "mini",
            base: float | None = None, head: float | None = None, par: bool = False, suite: str | None = None,
            pr: int | None = None, status: str = "done", created: datetime | None = None) -> int:
        names = ("one_thread_seconds", "n_threads_seconds") if par else ("language_seconds", "c_seconds")
        sides = [{"side": side, "sha": side[0] * 40, names[0]: [point, point], names[1]: [1.0, 1.0],
                  "interval": {"low": round(point * 0.94, 4), "point": point, "high": round(point * 1.06, 4)},
                  "decision": "pass"} for side, point in (("base", base), ("head", head)) if point is not None]
        result = {"verdict": verdict, "sides": sides,
                  "suite": {"verdict": suite, "tolerance": 0.05, "benchmarks": []} if suite else None}
        run = BenchRun(full_name=REPO, slug=slug, runner=runner, base_sha="b" * 40 if base else None, head_sha="h" * 40,
                       verdict=verdict, result=result, created_at=created or finished - timedelta(hours=1),
                       status=status,
                       purpose=purpose, pr_number=pr, started_at=finished - timedelta(minutes=50),
                       finished_at=finished if status == "done" else None)
        self.session.add(run)
        self.session.flush()
        return run.id

    def fix(self, slug: str, branch: str, when: datetime, *, pr: int | None = None, delta: int | None = None) -> None:
        self.session.add(Fix(full_name=REPO, slug=slug, branch=branch, source="pr-body" if pr else "branch",
                             head_sha="f" * 40, pr_number=pr, token_delta=delta, created_at=when, updated_at=when))

    def event(self, record: Record, kind: str, when: datetime, actor: str = "ada") -> None:
        self.session.add(RecordEvent(record_id=record.id, kind=kind, actor=actor, at=when))


@pytest.fixture
def month(database):
    """November 2026 of a team whose reports come from agents; the digest covers its last week."""
    with database.session() as session:
        s = Seed(session)
        # Before the window.
        fixed = s.report("perf_fixed_seq", "Parser 4.2x slower than C", "seq", "c", 4.2, at(2), SEQ)
        s.report("perf_sort_seq", "Sorting is 3.4x slower than C", "seq", "c", 3.4, at(3), SEQ)
        fib = s.report("perf_fib_par", "Fib scales poorly on 8 threads", "par", "c", 4.0, at(4), PAR, threads=8)
        session.add(SlugAlias(repo_id=s.repo.id, slug="perf_fib_parallel", record_id=fib.id))  # its former name
        s.report("perf_hash_seq", "HashMap insert | lookup slow", "seq", "c", 2.8, at(5), GPU)
        old_dup = s.report("perf_old_dup", "Tree walk slow", "seq", "c", 5.9, at(6), SEQ)
        closed = s.report("perf_closed_seq", "Metal copy 5x", "seq", "metal", 5.0, at(7), ADA)
        s.report("perf_gpu_matmul", "Matmul scaling on cuda", "par", "cuda", 8.0, at(8), GPU, threads=64)
        boundary = s.report("perf_boundary", "Closure calls 2.5x", "seq", "c", 2.5, at(9), SEQ)
        s.revise(boundary, END - timedelta(days=14), SEQ)  # its last sign of life: exactly 14 days before the end
        s.event(closed, "closed", at(10))
        closed.state = "closed"
        s.run("perf_gpu_matmul", "reproduce", "fail", at(12, 10), runner="cuda-box", head=8.5, par=True)
        s.run("perf_fixed_seq", "fix", "pass", at(14), base=4.2, head=1.8, pr=9)
        s.event(fixed, "fixed", at(15), "perfbot")
        fixed.state = "fixed"
        s.fix("perf_sort_seq", "fix/perf_sort_seq", at(20), pr=11, delta=-40)
        s.run("perf_fib_par", "fix", "fail", at(20, 12), runner="cuda-box", base=2.0, head=5.0, par=True,
              suite="fail", pr=12)
        s.fix("perf_fib_parallel", "fix/perf_fib_par", at(21), pr=12, delta=15)
        # The window: Monday 23rd 09:00 (included) to Monday 30th 09:00 (excluded).
        tree = s.report("perf_tree_seq", "Tree walk 6x slower than C", "seq", "c", 6.1, START, SEQ)
        s.report("perf_str_seq", "String concat `|` <b>bold</b> @team\nsecond line", "seq", "metal", 2.9,
                        at(24), GPU, errors=2, reproduced="not reproduced")
        dup_new = s.report("perf_dup_new", "Tree walk again", "seq", "c", 6.0, at(25), SEQ)
        vec = s.report("perf_vec_par", "Vector map on 4 threads", "par", "c", 2.5, at(26), PAR, threads=4, errors=1)
        s.revise(vec, at(26, 15), PAR, errors=0)  # its author fixed the lint error the same day
        s.merge(old_dup, tree, at(24, 12), SEQ)
        tree_hash = session.scalar(select(Revision.content_hash).where(Revision.record_id == tree.id))
        old_hash = session.scalar(select(Revision.content_hash).where(Revision.record_id == old_dup.id,
                                                                      Revision.change == "added"))
        session.add(LlmAnswer(kind="dedup", content_hash=tree_hash, partner_hash=old_hash, model="offline",
                              prompt_version="1", slug="perf_tree_seq", partner_slug="perf_old_dup",
                              answer={"verdict": "duplicate", "confidence": 0.91}, created_at=at(23, 10)))
        session.add(LlmAnswer(kind="dedup", content_hash="x" * 64, partner_hash="y" * 64, model="offline",
                              prompt_version="1", slug="perf_tree_seq", partner_slug="perf_dup_new",
                              answer={"verdict": "distinct", "confidence": 0.5},
                              created_at=at(23, 10)))  # another repository's texts
        s.merge(dup_new, tree, at(28), ADA)
        s.run("perf_sort_seq", "fix", "pass", at(25), base=3.4, head=1.6, suite="pass", pr=11)
        s.run("perf_fib_par", "fix", "pass", at(26), runner="cuda-box", base=2.0, head=6.4, par=True, suite="pass",
              pr=12)
        s.run("perf_str_seq", "reproduce", "pass", at(27), head=1.7)
        s.fix("perf_vec_par", "fix/perf_vec_par|x", at(27), delta=-12)
        s.fix("perf_tree_seq", "fix/perf_tree_seq", at(28), pr=14, delta=-3)
        s.run("perf_tree_seq", "fix", "fail", at(29), base=6.1, head=1.9, suite="fail", pr=14)
        # At the end: not in this window, in the next one.
        s.report("perf_late", "Late report", "seq", "c", 9.0, END, SEQ)
        s.run("perf_hash_seq", "fix", "pass", at(30, 10), base=2.8, head=1.1, created=END)
    return database


def test_every_section_of_the_week(month):
    d, _ = make_digest(month, REPO, CONFIG, since=START, now=END)
    assert (d.window_start, d.window_end, d.week) == (START, END, "2026-W49")
    assert [(r.slug, r.track, r.backend, r.ratio, r.state, r.author) for r in d.new_reports] == [
        ("perf_tree_seq", "seq", "c", 6.1, "open", "seq-agent"),  # created exactly at the window's start
        ("perf_str_seq", "seq", "metal", 2.9, "open", "gpu | agent"),
        ("perf_dup_new", "seq", "c", 6.0, "merged", "seq-agent"),
        ("perf_vec_par", "par", "c", 2.5, "open", "par-agent")]  # perf_late, created at the end, is next week's
    assert d.new_by_kind == (("par", "c", 1), ("seq", "c", 2), ("seq", "metal", 1))
    assert [(m.slug, m.into, m.at, m.verdict, m.confidence) for m in d.duplicates] == [
        ("perf_old_dup", "perf_tree_seq", at(24, 12), "duplicate", 0.91),
        ("perf_dup_new", "perf_tree_seq", at(28), None, None)]  # a person's merge; the other verdict is not ours
    assert [(f.slug, f.branch, f.pr_number, f.token_delta) for f in d.fixes] == [
        ("perf_vec_par", "fix/perf_vec_par|x", None, -12), ("perf_tree_seq", "fix/perf_tree_seq", 14, -3)]
    sort, fib = d.verified
    assert (sort.slug, sort.pr_number, sort.before, sort.after, sort.at) == ("perf_sort_seq", 11, 3.4, 1.6, at(25))
    assert (sort.after_low, sort.after_high) == pytest.approx((1.6 * 0.94, 1.6 * 1.06))
    # A par fix is verified by speedup (2.0x -> 6.4x on 8 threads), shown as the report's ratio: threads / speedup.
    assert (fib.slug, fib.track, fib.before, fib.after) == ("perf_fib_par", "par", 4.0, 1.25)
    assert (fib.after_low, fib.after_high) == pytest.approx((8 / (6.4 * 1.06), 8 / (6.4 * 0.94)))
    assert [(n.slug, n.claimed, n.measured) for n in d.not_reproduced] == [("perf_str_seq", 2.9, 1.7)]
    # Ranked by what main measures (a fix's base until the fix is in main), each kind on its own; never by a claim.
    assert [(s.slug, round(s.ranked_figure, 2), s.kind, str(s.outcome)) for s in d.ranked] == [
        ("perf_tree_seq", 6.1, "language/C", "no effect"), ("perf_sort_seq", 3.4, "language/C", "fixed"),
        ("perf_str_seq", 1.7, "language/C", "not reproduced"),
        ("perf_gpu_matmul", 7.53, "ideal/achieved", "not reproduced"),
        ("perf_fib_par", 4.0, "ideal/achieved", "fixed")]
    # Nothing measured them: listed apart with why, their claims shown but never ranked.
    assert [(s.slug, s.apart_reason) for s in d.apart] == [
        ("perf_boundary", "unmeasured"), ("perf_hash_seq", "unmeasured"), ("perf_vec_par", "defective: 1 lint error")]
    # neither passing fix has merged: they wait for merge, and nothing is called fixed in main
    assert [s.slug for s in d.waiting_merge] == ["perf_fib_par", "perf_sort_seq"]
    assert [s.slug for s in d.standings if s.fixed_in_main] == [r.slug for r in d.reports if r.state == "fixed"]
    # perf_boundary's last revision is exactly 14 days old: still alive.
    assert [(s.slug, s.last_activity, s.idle_days) for s in d.stale] == [
        ("perf_hash_seq", at(5), 25), ("perf_gpu_matmul", at(12, 10), 17)]
    assert [(a.name, a.email, a.reports, a.duplicates, a.defective, a.not_reproduced) for a in d.authors] == [
        ("seq-agent", "seq@agents.invalid", 2, 1, 0, 0),
        ("gpu | agent", "gpu@agents.invalid", 1, 0, 1, 1),
        ("par-agent", "par@agents.invalid", 1, 0, 0, 0)]  # vec's lint error was fixed: not defective


def test_milestone_progress(month):
    d, _ = make_digest(month, REPO, CONFIG, since=START, now=END)
    seq, metal, cuda, par, cuda_suite, mini_suite = d.milestones
    # Live seq reports: sort (verified 1.6), fixed (verified 1.8), str (measured 1.7) are there; closed, merged
    # and next week's reports do not count.
    assert (seq.done, seq.total, seq.fraction, seq.met) == (3, 6, 0.5, False)
    assert seq.failing == (Failing("perf_tree_seq", 6.1, "measured 6.10x above 2x"),  # its fix run's base
                           Failing("perf_hash_seq", 2.8, "claimed 2.80x above 2x"),
                           Failing("perf_boundary", 2.5, "claimed 2.50x above 2x"))
    assert (metal.done, metal.total, metal.fraction, metal.met, metal.failing) == (1, 1, 1.0, True, ())
    assert (cuda.done, cuda.total, cuda.fraction, cuda.met, cuda.failing) == (0, 0, None, False, ())
    assert (par.done, par.total, par.fraction, par.due, par.overdue) == (2, 4, 0.5, date(2026, 11, 27), True)
    assert par.failing == (Failing("perf_vec_par", None, "not measured yet"),
                           Failing("perf_missing", None, "no such report"))
    assert (cuda_suite.done, cuda_suite.total, cuda_suite.met) == (1, 1, True)  # the later run passed
    assert (mini_suite.done, mini_suite.total, mini_suite.overdue) == (0, 1, False)
    assert [f.why for f in mini_suite.failing] == [f"suite fail in run {_run_id(month, 'perf_tree_seq')}"]


def _run_id(db, slug: str) -> int:
    with db.session() as session:
        return session.scalar(select(BenchRun.id).where(BenchRun.slug == slug).order_by(BenchRun.id.desc()))


def test_the_next_window_starts_exactly_where_this_one_ended(month):
    d, _ = make_digest(month, REPO, CONFIG, since=END, now=END + timedelta(days=7))
    assert [r.slug for r in d.new_reports] == ["perf_late"]
    assert [v.slug for v in d.verified] == ["perf_hash_seq"]  # asked for exactly at the old window's end
    assert d.fixes == () and d.duplicates == () and d.not_reproduced == ()
    assert [s.slug for s in d.stale] == ["perf_gpu_matmul", "perf_boundary"]


def test_the_default_window_is_the_configured_days_before_now(month):
    d, _ = make_digest(month, REPO, CONFIG, since=None, now=END)
    assert (d.window_start, d.window_end) == (START, END)
    berlin = parse_repo_config('[digest]\ntimezone = "Europe/Berlin"\nwindow_days = 3\n')
    # Sunday 23:30 UTC is already Monday in Berlin: the week is named by the digest's own calendar.
    d, body = make_digest(month, REPO, berlin, since=None, now=at(29, 23, 30))
    assert d.week == "2026-W49" and d.window_start == at(26, 23, 30) and d.window_end == at(29, 23, 30)
    assert "2026-11-27 00:30 to 2026-11-30 00:30 (Europe/Berlin)" in body


def test_an_empty_store_and_an_unknown_repository_give_an_empty_digest(database):
    with database.session() as session:
        Seed(session, "team/empty")
    for key in ("team/empty", "team/unknown"):
        d, body = make_digest(database, key, CONFIG, since=START, now=END)
        assert (d.new_reports, d.new_by_kind, d.duplicates, d.fixes, d.verified, d.not_reproduced, d.ranked,
                d.apart, d.stale, d.authors) == ((),) * 10
        assert [(m.done, m.total, m.fraction) for m in d.milestones] == [
            (0, 0, None), (0, 0, None), (0, 0, None), (0, 4, 0.0), (0, 1, 0.0), (0, 1, 0.0)]
        assert body.startswith(f"<!-- perfbot:digest {key} 2026-W49 -->\n")
        # an empty section is left out, not shown empty; the milestones, declared, stay
        assert "## New reports" not in body and "## Act on" not in body and "no matching reports" in body
        assert "```mermaid\npie" not in body


def test_an_empty_window_is_refused(month):
    with pytest.raises(ValueError, match="empty"):
        make_digest(month, REPO, CONFIG, since=END, now=END)


def test_the_markdown_has_its_marker_tables_and_charts(month):
    _, body = make_digest(month, REPO, CONFIG, since=START, now=END)
    lines = body.splitlines()
    assert lines[0] == "<!-- perfbot:digest team/runtime 2026-W49 -->"
    assert lines[1] == "# perfbot digest for team/runtime: 2026-W49"
    # Neither passing fix has merged: they pass on their branch, and nothing is called verified yet.
    headings = [line for line in lines if line.startswith("## ")]
    assert headings == ["## Act on these first", "## Every report (9)",
                        "## Open reports ranked by their measured figure (5)",
                        "## Not ranked: no valid measurement (3)", "## New reports (4)", "## Duplicates merged (2)",
                        "## Fixes attached (2)", "## Fixes that pass on their branch, not merged yet (2)",
                        "## Claims not reproduced (1)", "## Stale: no activity for 14 days (2)", "## Authors (3)",
                        "## Milestones (6)"]  # Verified fixes (0) and the empty parity section are left out
    # Every row of a table has as many unescaped pipes as its header, whatever the titles and names hold.
    for block in re.findall(r"((?:^\|.*\n)+)", body, flags=re.M):
        rows = block.splitlines()
        widths = {len(re.findall(r"(?<!\\)\|", row)) for row in rows}
        assert len(widths) == 1, rows
    assert "| `perf_hash_seq` | HashMap insert \\| lookup slow |" in body
    # a title's `code` stays code (its pipe escaped, as GFM tables want even inside code); the rest is literal
    assert "String concat `\\|` \\<b\\>bold\\</b\\> @\u200bteam second line" in body
    assert "| gpu \\| agent | gpu@\u200bagents.invalid | 1 | 0 | 1 | 1 |" in body
    assert "`fix/perf_vec_par\\|x`" in body
    charts = re.findall(r"```mermaid\n(.*?)```", body, flags=re.S)
    assert [c.splitlines()[0] for c in charts] == ["pie showData", "xychart-beta"]
    assert ("title New reports by track and backend" in charts[0] and '"seq c" : 2' in charts[0]
            and '"seq metal" : 1' in charts[0])
    assert ("| `perf_sort_seq` | #11 | 3.40x | 1.60x [1.50, 1.70] |" in body
            and "| `perf_fib_par` | #12 | 4.00x | 1.25x [" in body)
    assert '"1_every_seq_report_at_or_under_2x"' in charts[1] and "bar [50, 100, 50, 100, 0]" in charts[1]
    for chart in charts:  # nothing from a report or a person reaches mermaid
        quoted = re.findall(r'"([^"]*)"', chart)
        assert all(re.fullmatch(r"[a-z0-9_ ]+", q) for q in quoted if not q[0].isupper()), quoted
    assert "| par scaling: 6x | par-speedup | 2/4 (50%) | 2026-11-27 ⚠️ overdue |" in body
    assert "| cuda seq near C | seq-near-c | no matching reports | – | – |" in body


def test_build_digest_is_pure_and_takes_the_threshold_when_a_milestone_has_none():
    record = RecordFact("perf_a", "A", "seq", "c", None, 2.4, "open", None, None, at(1))
    run = RunFact(1, "perf_a", "mini", "reproduce", "done", "fail", None, at(2), at(2),
                  (SidePoint("head", 2.2, 2.1, 2.3),), None)
    facts = CampaignFacts(REPO, records=(record,), runs=(run,))
    milestone = (Milestone(name="near", kind="seq-near-c"),)
    assert build_digest(facts, START, END, milestone, 2.5).milestones[0].met  # measured 2.2 <= 2.5
    strict = build_digest(facts, START, END, milestone, 2.0).milestones[0]
    assert (strict.done, strict.failing) == (0, (Failing("perf_a", 2.2, "measured 2.20x above 2x"),))
    assert build_digest(facts, START, END, milestone, 2.0) == build_digest(facts, START, END, milestone, 2.0)


def test_text_helpers_keep_untrusted_text_inert():
    assert cell("a|b\nc  d") == "a\\|b c d"
    assert cell("[x](http://e) *y* <img> $z$ & #1") == "\\[x\\](http://e) \\*y\\* \\<img\\> \\$z\\$ \\& \\#1"
    assert mermaid_label('Seq "x" --> y') == "seq__x______y"


def test_par_records_are_listed_by_efficiency_at_their_highest_count():
    from bot.core.verify.scaling import scaling_fact, summary
    from bot.digest.render import render_digest
    from tests.verify.test_scaling import amdahl

    def par(slug: str, state: str = "open") -> RecordFact:
        return RecordFact(slug, slug.title(), "par", "c", 4, 2.0, state, None, None, at(1))

    def swept(id_: int, slug: str, serial: float | None, counts=(1, 2, 4, 8)) -> RunFact:
        sweep = summary(amdahl(serial, counts, seed=id_), 4, 0.75) if serial is not None else None
        return RunFact(id_, slug, "mini", "fix", "done", "pass", None, at(20 + id_), at(20 + id_),
                       (SidePoint("head", 2.0, 1.9, 2.1),), None, scaling_fact(sweep))

    records = (par("perf_even"), par("perf_serial"), par("perf_gone", "merged"), par("perf_unswept"),
               RecordFact("perf_seq", "Seq", "seq", "c", None, 3.0, "open", None, None, at(1)))
    runs = (swept(1, "perf_serial", 0.0), swept(2, "perf_serial", 0.4),  # the latest sweep counts
            swept(3, "perf_even", 0.05, (1, 2, 4, 6)), swept(4, "perf_gone", 0.9), swept(5, "perf_unswept", None))
    digest = build_digest(CampaignFacts(REPO, records=records, runs=runs), START, END, (), 2.0)
    listed = [(p.slug, p.threads, round(p.efficiency[1], 2), p.flattens_after, p.run_id) for p in digest.par_scaling]
    # serial 0.4 at 8 threads: 1 / (0.4 + 0.6/8) = 2.1x, 0.26 of ideal; serial 0.05 at 6: 4.8x, 0.80.
    assert listed == [("perf_serial", 8, 0.26, 1, 2), ("perf_even", 6, 0.8, None, 3)]
    body = render_digest(digest)
    section = body[body.index("## PAR scaling"):body.index("## Stale")]
    assert "## PAR scaling by efficiency at the highest count (2)" in section
    row = r"\| `perf_serial` \| open \| 8 \| 0\.26 \[0\.\d\d, 0\.\d\d\] \| 2\.1\dx \| 4 \| 1 \| 2 \|"
    assert re.search(row, section)
    assert section.index("perf_serial") < section.index("perf_even") and "perf_gone" not in section


def test_a_mismatch_is_a_problem_of_its_own_and_a_fix_is_verified_only_once_merged():
    bogus = RecordFact("perf_bogus", "Wrong translation", "seq", "c", None, 1016.0, "open", None, "mismatch", at(1))
    slow = RecordFact("perf_slow", "Slow", "seq", "c", None, 9.5, "open", None, None, at(1))
    merged = RecordFact("perf_done", "Done", "seq", "c", None, 60.0, "open", None, None, at(1))
    runs = (RunFact(1, "perf_bogus", "mini", "reproduce", "done", "mismatch", None, at(24), at(24), (), None),
            RunFact(2, "perf_slow", "mini", "fix", "done", "pass", 7, at(24), at(24),
                    (SidePoint("base", 9.2, 9.0, 9.4), SidePoint("head", 1.5, 1.4, 1.6)), None),
            RunFact(3, "perf_done", "mini", "fix", "done", "pass", 8, at(25), at(25),
                    (SidePoint("base", 60.0, 58.0, 62.0), SidePoint("head", 1.2, 1.1, 1.3)), None))
    fixes = (FixFact("perf_slow", "fix/slow", 7, "pr", "open", None, at(24), at(24)),
             FixFact("perf_done", "fix/done", 8, "pr", "merged", None, at(25), at(26)))
    par = RecordFact("perf_par", "Par", "par", "c", 8, 5.0, "open", None, None, at(1))
    older = RecordFact("perf_v1", "Slower than v1", "seq", "c", None, 1.4, "open", None, None, at(1), "runtime@v1")
    d = build_digest(CampaignFacts(REPO, records=(bogus, slow, merged, par, older), runs=runs, fixes=fixes),
                     START, END, (), 2.0)
    # only measured figures are ranked: the two fixes' bases; the claims of par and v1 are listed apart
    assert {s.slug: s.kind for s in d.ranked} == {"perf_slow": "language/C", "perf_done": "language/C"}
    assert [(s.slug, s.apart_reason) for s in d.apart] == [("perf_bogus", "output mismatch: nothing was timed"),
                                                           ("perf_par", "unmeasured"), ("perf_v1", "unmeasured")]
    assert [v.slug for v in d.merged_fixes] == ["perf_done"] and [v.slug for v in d.branch_fixes] == ["perf_slow"]
    outcomes = {s.slug: s.outcome for s in d.standings}
    assert (outcomes["perf_done"], outcomes["perf_slow"]) == (Outcome.FIXED_IN_MAIN, Outcome.FIXED)
    body = render_digest(d)
    assert "| `perf_bogus` | Wrong translation | output mismatch: nothing was timed | 1016x in wall time |" in body
    assert "· 1 fix waiting for merge · 1 fixed in main · 3 not ranked" in body
    assert "- **fix waiting for merge** `perf_slow`: fixed: 1.50x \\[1.40, 1.60\\] in wall time" in body
    kinds = [line for line in body.splitlines() if line.startswith("### ")]
    assert kinds == ["### language/C (2)"]
    assert "1016" not in body[body.index("## Open reports ranked"):body.index("## Not ranked")]


@pytest.mark.parametrize("title, shown", [
    ("`%` runs a 24-step loop", "`%` runs a 24-step loop"),  # code stays code
    (r"sum\_mod is slow", r"sum\_mod is slow"),  # the agent's escape shows its character, escaped once
    ("a | b `x|y` @bob <b>", "a \\| b `x\\|y` @\u200bbob \\<b\\>"),
    ("``a`b`` c", "``a`b`` c"),  # a backtick inside a code span keeps the longer fence
    ("one ` backtick", "one \\` backtick"),  # no span: the backtick is text
])
def test_a_title_keeps_its_code_spans_and_nothing_else_acts(title, shown):
    assert title_cell(title) == shown


def test_the_weeks_fixes_and_unreproduced_claims_are_only_those_the_standing_still_says():
    """A fix that passed this week, then failed on a later head; a claim not reproduced, then reproduced: the
    digest's sections of the week follow the record's standing, never an older run's answer beside it."""
    undone = RecordFact("perf_undone", "Undone", "seq", "c", None, 9.0, "open", None, None, at(1))
    back = RecordFact("perf_back", "Back", "seq", "c", None, 5.0, "open", None, None, at(1))
    gone = RecordFact("perf_gone", "Gone", "seq", "c", None, 5.0, "open", None, None, at(1), claim_measure="user")
    base, head = SidePoint("base", 9.2, 9.0, 9.4, "fail"), SidePoint("head", 1.5, 1.4, 1.6)
    runs = (RunFact(1, "perf_undone", "mini", "fix", "done", "pass", 7, at(24), at(24), (base, head), None),
            RunFact(2, "perf_undone", "mini", "fix", "done", "fail", 7, at(25), at(25),
                    (base, SidePoint("head", 8.0, 7.5, 8.5)), None),
            RunFact(3, "perf_back", "mini", "reproduce", "done", "pass", None, at(24), at(24),
                    (SidePoint("head", 1.1, 1.0, 1.2),), None),
            RunFact(4, "perf_back", "mini", "reproduce", "done", "fail", None, at(25), at(25),
                    (SidePoint("head", 4.9, 4.5, 5.3),), None),
            RunFact(5, "perf_gone", "mini", "reproduce", "done", "pass", None, at(24), at(24),
                    (SidePoint("head", 1.1, 1.0, 1.2),), None, measure="instructions"))
    d = build_digest(CampaignFacts(REPO, records=(undone, back, gone), runs=runs), START, END, (), 2.0)
    outcomes = {s.slug: s.outcome for s in d.standings}
    assert outcomes == {"perf_undone": Outcome.NO_EFFECT, "perf_back": Outcome.ACCURATE,
                        "perf_gone": Outcome.NOT_REPRODUCED}
    assert d.verified == () and [n.slug for n in d.not_reproduced] == ["perf_gone"]
    body = render_digest(d)
    # each figure with its measure: the claim was user time, the measurement instructions
    assert "| `perf_gone` | Gone | 5.00x in user time | 1.10x in instructions | 5 |" in body
