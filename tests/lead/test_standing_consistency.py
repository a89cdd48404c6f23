"""One truth about every record: generated campaigns (claims, mismatches, fixes in or out of main, references,
bisections, noisy runs) rendered through every view, which must agree on every count, ranking, outcome word and
figure with the one standing core/lead/standing.py computes.

Views: the overview (tiles, ranking, listed apart), the records list (its outcome badges, its measured order),
every record page, the digest (header, the per-report table, the ranking), the dashboard issue, each record's
issue body and labels, and `perfbot list --format json`."""
from __future__ import annotations

import html
import json
import re
from datetime import UTC, datetime, timedelta

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from sqlalchemy import delete, select

from bot.adapters import charts
from bot.adapters.store.engine import Database
from bot.adapters.store.lead.lead_queries import lead_facts
from bot.adapters.store.lead.standing_queries import all_standings
from bot.adapters.store.mirror_queries import load_mirror_rows
from bot.adapters.store.models import Record, Repo, Revision, SlugAlias
from bot.adapters.store.queue import DeliveryQueue
from bot.adapters.store.service_models import BenchRun, Bisection, Fix, IssueMirror
from bot.adapters.templates import render
from bot.app import create_app
from bot.cli.records_cmd import list_command, show_command
from bot.config import Settings
from bot.core.config import PerfbotFile
from bot.core.lead import wording
from bot.core.lead.campaign import ranking, tally
from bot.core.lead.dashboard import build_dashboard
from bot.core.tracker.issue_view import issue_spec
from bot.core.tracker.untrusted import cell
from bot.core.verify.vocabulary import Outcome, Purpose, RunStatus
from bot.core.verify.vocabulary import Test as IntervalTest
from bot.digest.render import make_digest
from bot.services.lead.dashboard_flow import render_dashboard

REPO = "acme/runtime"
NOW = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)
T0 = NOW - timedelta(days=3)

ratios = st.floats(min_value=0.05, max_value=900, allow_nan=False).map(lambda v: round(v, 3))
runs = st.fixed_dictionaries({
    "purpose": st.sampled_from(["reproduce", "fix", "guard"]),
    "verdict": st.sampled_from(["pass", "fail", "fail", "inconclusive", "mismatch", "implausible", "error"]),
    "head": ratios, "base": ratios, "width": st.floats(min_value=0.01, max_value=0.6),
    "gain": st.one_of(st.none(), st.floats(min_value=0.5, max_value=50)),
    "in_main": st.booleans(), "noisy": st.booleans(), "measure": st.sampled_from([None, "instructions"]),
    "inputs": st.booleans(),  # a report measured on two inputs: two sides of each name, told apart by input
})
records = st.fixed_dictionaries({
    "track": st.sampled_from(["seq", "seq", "par"]),
    "reference": st.booleans(),
    "ratio": st.one_of(st.none(), ratios),
    "state": st.sampled_from(["open", "open", "open", "regressed", "fixed"]),
    "errors": st.sampled_from([0, 0, 0, 2]),
    "measure": st.sampled_from([None, None, "instructions"]),
    "fix": st.sampled_from([None, "branch", "commit"]),
    "fix_state": st.sampled_from(["open", "merged"]),
    "bisected": st.booleans(),
    "runs": st.lists(runs, max_size=3),
})
campaigns = st.lists(records, min_size=1, max_size=6)


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    db = Database(f"sqlite:///{tmp_path_factory.mktemp('consistency') / 'perfbot.sqlite3'}")
    app = create_app(Settings(instance_dir=tmp_path_factory.mktemp("instance"), database_url=db.url),
                     DeliveryQueue(db), wanted_events=frozenset())
    # The words and figures are checked here; matplotlib drawing each run's chart was half the test's time, and
    # the charts have their own tests (tests/lead/test_dashboard.py, the browser tests).
    with pytest.MonkeyPatch.context() as patch:
        for name in ("sides_chart", "scaling_chart"):
            patch.setattr(charts, name, lambda *args, **kwargs: '<svg class="chart"></svg>')
        yield db, app
    db.dispose()


def _interval(point: float, width: float) -> dict:
    return {"low": point * (1 - width / 2), "point": point, "high": point * (1 + width)}


def _side(label: str, sha: str, point: float, width: float, decision: str, measure, par: bool) -> dict:
    names = ("one_thread_seconds", "n_threads_seconds") if par else ("language_seconds", "c_seconds")
    return {"side": label, "sha": sha, names[0]: [point * 0.01] * 3, names[1]: [0.01] * 3,
            "interval": _interval(point, width), "decision": decision, "measure": measure, "output": "42"}


def seed(db: Database, campaign: list[dict]) -> None:
    with db.session() as session:
        for model in (IssueMirror, Bisection, Fix, BenchRun, SlugAlias, Revision, Record, Repo):
            session.execute(delete(model))
    with db.session() as session:
        repo = Repo(full_name=REPO, last_synced_commit="a" * 40, synced_at=T0)
        session.add(repo)
        session.flush()
        clock = iter(range(1, 10_000))
        for n, r in enumerate(campaign):
            slug = f"perf_r{n}"
            fix_sha = f"{n:02d}".ljust(40, "f")
            record = Record(repo_id=repo.id, slug=slug, path=f"devs/issues/{slug}.md", state=r["state"],
                            title=f"Report {n}", track=r["track"], backend="c", threads=8 if r["track"] == "par"
                            else None, ratio=r["ratio"], errors=r["errors"], warnings=0,
                            reference="runtime@v1" if r["reference"] and r["track"] == "seq" else None,
                            fix={"branch": f"fix/{slug}", "commit": fix_sha[:7], None: "unknown"}[r["fix"]],
                            content_hash=f"{n:064d}", supersedes=[], created_at=T0, updated_at=T0)
            session.add(record)
            session.flush()
            session.add(SlugAlias(repo_id=repo.id, slug=slug, record_id=record.id))
            session.add(Revision(record_id=record.id, commit_sha="c" * 40, author_name="agent",
                                 author_email="agent@example.invalid", path=record.path, committed_at=T0,
                                 change="added", content_hash=f"{n:064d}", content=f"# Report {n}\n",
                                 facts={"measure": r["measure"]} if r["measure"] else {}, findings=[]))
            if r["fix"] == "branch":
                session.add(Fix(full_name=REPO, slug=slug, branch=f"fix/{slug}", source="branch",
                                state=r["fix_state"], head_sha=fix_sha, base_sha="a" * 40, created_at=T0,
                                updated_at=T0))
            for run in r["runs"]:
                at = T0 + timedelta(minutes=next(clock))
                par = r["track"] == "par"
                head = _side("head", fix_sha if run["purpose"] == "fix" else "b" * 40, run["head"], run["width"],
                             run["verdict"], run["measure"], par)
                sides = [head]
                if run["purpose"] == "fix":
                    sides.insert(0, _side("base", "a" * 40, run["base"], run["width"], "fail", run["measure"], par))
                if run["inputs"]:
                    sides = [side | {"input": "1000"} for side in sides] + \
                        [side | {"input": "4000", "interval": _interval(side["interval"]["point"] * 3, run["width"])}
                         for side in sides]
                result = {"sides": sides if run["verdict"] != "error" else [], "noisy": "busy" if run["noisy"]
                          else None, "in_main": run["in_main"],
                          "gain": _interval(run["gain"], 0.1) if run["gain"] and run["purpose"] == "fix" else None}
                session.add(BenchRun(full_name=REPO, slug=slug, runner="mini", base_sha="a" * 40
                                     if run["purpose"] == "fix" else None, head_sha=head["sha"],
                                     verdict=run["verdict"], message="", result=result, status="done",
                                     purpose=run["purpose"], created_at=at, started_at=at, finished_at=at))
            if r["bisected"]:
                session.add(Bisection(full_name=REPO, slug=slug, good_sha="1" * 40, bad_sha="2" * 40, status="done",
                                      outcome="found", culprit_sha=f"{n:02d}".ljust(40, "9"),
                                      message=f"introduced by {n:02d}99999999; last good {'3' * 12}",
                                      created_at=T0, finished_at=T0))


def _texts(page: str, pattern: str) -> list[str]:
    return [html.unescape(m) for m in re.findall(pattern, page, re.S)]


def _section(page: str, table_id: str) -> str:
    found = re.search(rf'<table[^>]*id="{table_id}".*?</table>', page, re.S)
    return found.group(0) if found else ""


# No shrinking: each example seeds a store and renders every page, so shrinking one takes minutes; a failing
# campaign is printed whole (at most six records), which is small enough to read.
@settings(max_examples=25, deadline=None, phases=[Phase.explicit, Phase.reuse, Phase.generate],
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(campaign=campaigns)
def test_every_view_agrees_with_the_one_standing(store, campaign):
    db, app = store
    seed(db, campaign)
    standings = {slug: s for (_, slug), s in all_standings(db).items()}
    every = list(standings.values())
    t = tally(every)
    ranked, apart = ranking(every)
    # A claim run that measured something is a measurement, however many inputs it had.
    for n, r in enumerate(campaign):
        measured = [run for run in r["runs"] if run["purpose"] in ("reproduce", "guard")
                    and run["verdict"] in ("pass", "fail", "inconclusive")]
        if measured:
            assert standings[f"perf_r{n}"].measured is not None, r
    # Rankings use measured figures only: nothing without a valid measurement is ranked, everything live is listed.
    assert all(s.ranked_figure is not None and s.outcome.measured for s in ranked)
    assert {s.slug for s in ranked} | {s.slug for s in apart} == {s.slug for s in every if s.live}
    assert all(s.outcome is not Outcome.MISMATCH for s in ranked)
    # why a record is listed apart never contradicts its outcome: "unmeasured" only beside "unmeasured"
    assert all(s.outcome is Outcome.UNMEASURED for s in apart if s.apart_reason == "unmeasured")

    client = app.test_client()

    # The overview: its tiles are the tally, its ranking the ranking, its apart list the records not ranked.
    overview = client.get("/dashboard/").get_data(as_text=True)
    tiles = dict(re.findall(r'id="count-([a-z-]+)"><div class="n">(\d+)</div>', overview))
    assert tiles == {"open": str(t.live), "overstated": str(t.overstated), "culprits": str(t.culprits),
                     "waiting": str(t.waiting_merge), "fixed-in-main": str(t.fixed_in_main), "apart": str(t.apart)}
    assert _texts(_section(overview, "ranked"), r'data-slug="([^"]+)"') == [s.slug for s in ranked]
    assert _texts(_section(overview, "apart"), r'data-slug="([^"]+)"') == [s.slug for s in apart]
    assert _texts(overview, r'data-outcome="([^"]+)"') == [str(s.outcome) for s in (*ranked, *apart)]

    # The records list: one outcome per record, and its measured order is the ranking's.
    listed = client.get("/dashboard/records?state=all").get_data(as_text=True)
    rows = re.findall(r'data-slug="([^"]+)".*?(?:data-outcome="([^"]+)"|</tr>)', listed, re.S)
    assert {slug: outcome for slug, outcome in rows} == {s.slug: str(s.outcome) for s in every}
    open_rows = client.get("/dashboard/records?state=open").get_data(as_text=True)
    order = [slug for slug in _texts(open_rows, r'data-slug="([^"]+)"') if standings[slug].ranked_figure is not None]
    assert order == [s.slug for s in ranked if s.state == "open"]
    rest = [slug for slug in _texts(open_rows, r'data-slug="([^"]+)"') if standings[slug].ranked_figure is None]
    assert rest == [s.slug for s in apart if s.state == "open"]  # after the ranked, never ordered by their claim
    for outcome, count in t.outcomes:
        filtered = client.get(f"/dashboard/records?state=all&outcome={outcome}").get_data(as_text=True)
        assert len(re.findall(r'class="record-row"', filtered)) == sum(
            s.outcome is outcome or (outcome is Outcome.OVERSTATED and s.overstated) for s in every)
        assert count == sum(s.outcome is outcome and s.live for s in every)

    # The overstated tile leads to every overstated claim, fixed since or not.
    overstated = client.get("/dashboard/records?state=open&outcome=overstated").get_data(as_text=True)
    assert len(re.findall(r'class="record-row"', overstated)) == sum(s.overstated for s in every if s.state == "open")

    # Every record page says the standing's sentence, figures and all.
    for s in every:
        page = client.get(f"/dashboard/records/{s.record_id}").get_data(as_text=True)
        said = _texts(page, r'<dd id="standing">.*?</span> (.*?)</dd>')
        assert said == [wording.said(s)]
        assert ("No fix known" in page) == (s.fix is None)
        assert ("introduced by" in page) == (s.culprit is not None)

    # The digest: its header counts are the tally, its report table the standings, its ranking the ranking.
    _, digest = make_digest(db, REPO, PerfbotFile(), since=NOW - timedelta(days=7), now=NOW)
    header = digest.splitlines()[3]
    for words, count in ((" open", t.live), (" overstated", t.overstated), (" with a culprit", t.culprits),
                         (" fixed in main", t.fixed_in_main), (" not ranked", t.apart)):
        assert f"· {count}{words}" in header, (words, header)
    for s in every:
        in_table = s.live or s.state == "fixed"
        if in_table:
            row = next(line for line in digest.splitlines() if line.startswith(f"| `{s.slug}` | ") and
                       cell(wording.said(s)) in line)
            real = "not known" if s.checked.real is None else "yes" if s.checked.real else "no"
            assert row.split(" | ")[1] == real
            assert row.split(" | ")[6] == ("yes" if s.fixed_in_main else "no")
            assert row.split(" | ")[5].endswith("(in main)" if s.fix and s.fix.merged else
                                                "(not merged)" if s.fix else "none")
    digest_ranked = re.findall(r"^\| \d+ \| `(perf_r\d+)` \|", digest, re.M)
    assert digest_ranked == [s.slug for s in ranked]
    assert not re.search(r"^## .*\(0\)$", digest, re.M)  # an empty section is dropped, never shown empty

    # The dashboard issue: the same figures and words.
    facts, issues, _ = lead_facts(db, REPO, NOW)
    # the core reads a run's purpose, status and verdict as enums, never as loose strings
    assert all(type(r.purpose) is Purpose and type(r.status) is RunStatus
               and type(r.verdict) in (IntervalTest, type(None)) for r in facts.runs)
    board = render_dashboard(build_dashboard(REPO, facts.records, facts.runs, facts.fixes, issues, (), (), (),
                                             facts.bisections))
    for s in ranked + apart:
        assert cell(wording.said(s)) in board

    # Each record's issue: its body says the standing, its labels are the outcome and whether a fix is known.
    for row in load_mirror_rows(db, REPO, None):
        s = standings[row.view.slug]
        spec = issue_spec(row.view)
        labels = spec.labels
        assert spec.title.endswith(f" (claimed {wording.claim_cell(s)})" if s.claim.figure is not None else "")
        assert ("has fix" in labels) == (s.fix is not None)
        assert [label for label in labels if label.startswith("outcome: ")] == \
            ([] if s.outcome is Outcome.UNMEASURED else [f"outcome: {s.outcome}"])
        body = render("issue_body.md.j2", marker="", record=row.view, content="", commit="", file_url="")
        assert cell(wording.said(s)) in body

    # `perfbot list`: the same outcomes, measured figures and order.
    out = CliRunner().invoke(list_command, ["--state", "all", "--format", "json", "--db", db.url])
    assert out.exit_code == 0, out.output
    listed_json = json.loads(out.output)
    assert {r["slug"]: (r["outcome"], r["measured"], r["standing"]) for r in listed_json} == \
        {s.slug: (str(s.outcome), s.ranked_figure, wording.said(s)) for s in every}
    cli_open = [r["slug"] for r in listed_json if r["state"] == "open" and r["measured"] is not None]
    assert cli_open == [s.slug for s in ranked if s.state == "open"]
    # what is listed apart keeps the ranking's order too, never the order of its claims
    cli_apart = [r["slug"] for r in listed_json if r["state"] in ("open", "regressed") and r["measured"] is None]
    assert cli_apart == [s.slug for s in apart]
    for s in every[:2]:  # `perfbot show` (two records an example: each call opens the store): the same sentence
        shown = CliRunner().invoke(show_command, [s.slug, "--db", db.url])
        assert shown.exit_code == 0, shown.output
        assert f"  standing  {wording.said(s)}" in shown.output.splitlines()
        assert f"claimed {wording.claim_cell(s)}" in shown.output if s.claim.figure is not None else True

    # Every run page says where its record stands, in the same words.
    with db.session() as session:
        run_slugs = {run_id: slug for run_id, slug in session.execute(select(BenchRun.id, BenchRun.slug))}
    for run_id, slug in run_slugs.items():
        page = client.get(f"/dashboard/runs/{run_id}").get_data(as_text=True)
        assert _texts(page, r'<dd id="record-standing">.*?</span> (.*?)</dd>') == [wording.said(standings[slug])]

    # The digest's sections of the week never say what the standing does not.
    for section, agrees in (("## Claims not reproduced", lambda s: s.outcome is Outcome.NOT_REPRODUCED),
                            ("## Verified fixes", lambda s: s.outcome is Outcome.FIXED_IN_MAIN),
                            ("## Fixes that pass on their branch", lambda s: s.outcome is Outcome.FIXED)):
        if section in digest:
            part = digest[digest.index(section):].split("\n## ", 1)[0]
            assert all(agrees(standings[slug]) for slug in re.findall(r"^\| `(perf_r\d+)` \|", part, re.M)), part
