"""The dashboard through Flask's test client: every page, the table's filters and sorts, auth, escaping, no URLs out."""
from __future__ import annotations

import itertools
import re
import statistics
from datetime import timedelta
from html.parser import HTMLParser

import pytest

from bot.adapters import charts
from bot.adapters.store.engine import Database
from bot.adapters.store.queue import DeliveryQueue
from bot.app import create_app
from bot.app.dashboard_auth import COOKIE
from bot.app.dashboard_render import milestones, summary_numbers
from bot.config import Settings
from tests.lead.test_dashboard_data import HOSTILE_TITLE, seed

_names = itertools.count(1)
TOKEN = "s3cret-dashboard-token"
ALL_BY_SLUG = ["perf_boxed_sum", "perf_closed_thing", "perf_float_boxing", "perf_mod_shift_subtract", "perf_par_sort",
               "perf_u24_arith_boxing", "perf_u24_old"]


@pytest.fixture(scope="module", params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def store(request, tmp_path_factory):
    """One seeded store per backend for the whole module: the dashboard never writes, so tests can share it."""
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path_factory.mktemp('dashboard') / 'perfbot.sqlite3'}"
    else:
        url = request.getfixturevalue("postgres_server").create_database(f"perfbot_dashboard_{next(_names)}")
    db = Database(url)
    ids = seed(db)
    yield db, ids
    db.dispose()


def make_client(db: Database, tmp_path, **settings):
    app = create_app(Settings(instance_dir=tmp_path, database_url=db.url, **settings), DeliveryQueue(db),
                     wanted_events=frozenset())
    return app.test_client()


@pytest.fixture
def client(store, tmp_path):
    return make_client(store[0], tmp_path)


@pytest.fixture
def ids(store):
    return store[1]


def pages(ids) -> dict[str, str]:
    return {"overview": "/dashboard/", "records": "/dashboard/records?state=all",
            "record": f"/dashboard/records/{ids['perf_boxed_sum']}",
            "hostile": f"/dashboard/records/{ids['perf_float_boxing']}",
            "merged": f"/dashboard/records/{ids['perf_u24_old']}", "runs": "/dashboard/runs",
            "run": f"/dashboard/runs/{ids['run_done']}", "running": f"/dashboard/runs/{ids['run_running']}",
            "queued": f"/dashboard/runs/{ids['run_queued']}", "par run": f"/dashboard/runs/{ids['run_par']}",
            "digests": "/dashboard/digests", "digest": f"/dashboard/digests/{ids['digest']}"}


def slugs(response) -> list[str]:
    return re.findall(r'<tr class="record-row" data-slug="([^"]+)"', response.get_data(as_text=True))


def test_every_page_answers_with_html(client, ids):
    expected = {"overview": ["against the 2x line", "4.49x [4.17, 4.80] in wall time", "2.91x", "seq reports near C",
                             "perf_boxed_sum", "63.6x in wall time", "log scale"],
                "record": ["audit-repro-size", "cut it to the smallest program", "fix/perf_boxed_sum-unbox", "+40",
                           "-35", "overlaps", "not-duplicate", "00cccccccc", "Bench run #", "<svg", "Unbox the loop"],
                "merged": ["perf_u24_arith_boxing", "duplicate"],
                "run": ["language/C [95% interval]", "4.49x", "1.14x", "<svg", "fib", "499999500000"],
                "running": ['http-equiv="refresh"', "base: 4 of at most 30 sample pairs", "<svg"],
                "queued": ["waiting for a worker", 'http-equiv="refresh"'],
                "par run": ["1 thread (median s)", "8 threads (median s)", "speedup"],
                "digests": ["2026-W19", "#40"],
                "digest": ["digest for acme/runtime: 2026-W19", "par reports scaling", ">met<", "Every report"]}
    for name, url in pages(ids).items():
        response = client.get(url)
        assert response.status_code == 200, name
        assert response.mimetype == "text/html"
        text = response.get_data(as_text=True)
        for needle in expected.get(name, []):
            assert needle in text, f"{name}: {needle!r} missing"
    done = client.get(f"/dashboard/runs/{ids['run_done']}").get_data(as_text=True)
    assert "refresh" not in done  # a finished run stops refreshing
    # base against head on one chart, each side's ratio with its interval and measure in the chart's own title
    assert 'aria-label="bench run 1: perf_boxed_sum; language/C in wall time: base 4.49x [4.17, 4.80], head 1.14x ' \
        '[1.06, 1.22]"' in done.replace(f"bench run {ids['run_done']}:", "bench run 1:")
    # the stored suite, read back typed: its summary said again from its benchmarks, each one's interval
    assert "suite pass: 1 ok, 0 regressed, 0 inconclusive at 5% tolerance" in done
    assert re.search(r'<td class="mono">fib</td><td class="num">0.99x \[0.97, 1.01\]', done), done
    assert "perfbot:digest" not in client.get(f"/dashboard/digests/{ids['digest']}").get_data(as_text=True)


def test_verdicts_are_shown_as_answers_coloured_by_what_they_mean(client, ids):
    done = client.get(f"/dashboard/runs/{ids['run_done']}").get_data(as_text=True)
    assert '<span class="badge verdict-good" data-verdict="fixed">fixed</span>' in done
    assert re.search(r"<td>base</td>.*?<td>reproduced</td>", done, re.S) and ">pass<" not in done
    par = client.get(f"/dashboard/runs/{ids['run_par']}").get_data(as_text=True)
    assert '<span class="badge verdict-bad" data-verdict="not_fixed">no effect</span>' in par
    overview = client.get("/dashboard/").get_data(as_text=True)
    # each record's one outcome, never a run's interval test; the claim beside the measured figure, never ranked
    assert 'data-outcome="fixed"' in overview and 'data-outcome="accurate"' in overview and ">pass<" not in overview
    assert '<td class="num">63.6x in wall time</td>' in overview
    runs = client.get("/dashboard/runs").get_data(as_text=True)
    assert 'data-verdict="fixed"' in runs and 'class="badge pass"' not in runs


def test_the_root_leads_to_the_dashboard_and_the_service_routes_stay(client):
    response = client.get("/")
    assert response.status_code == 302 and response.headers["Location"].endswith("/dashboard/")
    assert client.get("/healthz").status_code == 200
    assert client.get("/webhook").status_code == 405


def test_unknown_records_runs_and_digests_are_404_pages(client):
    for url, message in (("/dashboard/records/999999", "no record 999999"), ("/dashboard/runs/999999", "no bench run"),
                         ("/dashboard/digests/999999", "no digest"), ("/dashboard/records/perf_x", ""),
                         # beyond any id column: no match for the route, never a query that overflows (a 500)
                         ("/dashboard/records/99999999999999999999999", ""), ("/dashboard/runs/2147483648", ""),
                         ("/dashboard/digests/9223372036854775808", "")):
        response = client.get(url)
        assert response.status_code == 404 and message in response.get_data(as_text=True)


@pytest.mark.parametrize("query, expected", [
    ("state=all&sort=slug", ALL_BY_SLUG),
    ("state=all&sort=slug&order=desc", ALL_BY_SLUG[::-1]),
    # by the measured figure, never the claim: the unmeasured ones after, whatever the order, by outcome and slug
    # (no effect, unmeasured): perf_mod_shift_subtract's larger claim never puts it first
    ("", ["perf_boxed_sum", "perf_float_boxing", "perf_par_sort", "perf_mod_shift_subtract"]),
    ("sort=measured&order=asc", ["perf_float_boxing", "perf_boxed_sum", "perf_par_sort", "perf_mod_shift_subtract"]),
    ("state=all&outcome=accurate", ["perf_float_boxing"]),
    ("state=all&sort=state&order=asc", ["perf_closed_thing", "perf_u24_arith_boxing", "perf_u24_old", "perf_boxed_sum",
                                        "perf_float_boxing", "perf_mod_shift_subtract", "perf_par_sort"]),
    ("sort=updated", ["perf_par_sort", "perf_mod_shift_subtract", "perf_float_boxing", "perf_boxed_sum"]),
    ("state=all&q=U24&sort=slug", ["perf_u24_arith_boxing", "perf_u24_old"]),
    ("state=all&q=shift-and&sort=slug", ["perf_mod_shift_subtract"]),
    # a LIKE wildcard typed in the box is a character, not "anything": only the title with a `%` matches
    ("state=all&q=%25", ["perf_mod_shift_subtract"]),
    ("state=all&track=par", ["perf_par_sort"]),
    ("state=all&backend=cuda", ["perf_float_boxing"]),
    ("state=merged", ["perf_u24_old"]),
    ("state=bogus&sort=bogus&order=sideways", ["perf_boxed_sum", "perf_float_boxing", "perf_par_sort",
                                               "perf_mod_shift_subtract"]),
])
def test_the_record_table_filters_and_sorts_on_the_server(client, query, expected):
    assert slugs(client.get(f"/dashboard/records?{query}")) == expected


def test_sort_links_keep_the_filter_and_turn_the_current_column_round(client):
    text = client.get("/dashboard/records?state=all&track=seq&sort=measured").get_data(as_text=True)
    ratio = re.search(r'href="([^"]+)" id="sort-measured"', text).group(1)
    slug = re.search(r'href="([^"]+)" id="sort-slug"', text).group(1)
    assert "order=asc" in ratio and "track=seq" in ratio and "state=all" in ratio
    assert "sort=slug" in slug and "order=asc" in slug


def test_a_hostile_title_and_report_are_shown_as_text(client, ids):
    for url in ("/dashboard/records?state=all", f"/dashboard/records/{ids['perf_float_boxing']}", "/dashboard/"):
        text = client.get(url).get_data(as_text=True)
        assert "<script" not in text.lower() and "onerror=\"" not in text
        assert "&lt;script&gt;alert(&#39;title&#39;)&lt;/script&gt;" in text or HOSTILE_TITLE not in text
    record = client.get(f"/dashboard/records/{ids['perf_float_boxing']}").get_data(as_text=True)
    assert "&lt;script&gt;alert('body')&lt;/script&gt;" in record and "<img" not in record
    assert 'href="javascript:' not in record
    # a report's link is a link someone may follow, never a resource the page loads
    assert re.findall(r'<a href="https://[^"]*"( rel="[^"]*")?', record) == [' rel="nofollow noopener noreferrer"']


class Loads(HTMLParser):
    """What a page would make a browser fetch or follow: tags and attributes, never the escaped text between them."""

    def __init__(self, page: str) -> None:
        super().__init__()
        self.tags: set[str] = set()
        self.addresses: list[str] = []
        self.links: list[str] = []
        self.styles: list[str] = []
        self._style = False
        self.feed(page)

    def handle_starttag(self, tag, attrs):
        self.tags.add(tag)
        self._style = tag == "style"
        for name, value in attrs:
            if name in ("href", "xlink:href"):
                (self.links if tag == "a" else self.addresses).append(value or "")
            elif name in ("src", "srcset", "poster", "data", "action", "formaction", "content", "style"):
                self.addresses.append(value or "")

    def handle_data(self, data):
        if self._style:
            self.styles.append(data)


def outside(value: str) -> bool:
    return bool(re.search(r"(?:[a-z]+:)?//|url\((?!#)|@import", value, re.I)) and not value.startswith("data:")


def test_pages_load_nothing_and_name_no_outside_address(client, ids):
    for name, url in pages(ids).items():
        response = client.get(url)
        loads = Loads(response.get_data(as_text=True))
        assert not loads.tags & {"script", "img", "iframe", "object", "embed", "video", "audio", "image"}, name
        assert [a for a in loads.addresses + loads.styles if outside(a)] == [], name
        # the only outside link is the one the hostile report itself writes, shown as a plain link
        assert all(not outside(link) for link in loads.links) or name == "hostile", name
        assert "default-src 'none'" in response.headers["Content-Security-Policy"]
        assert response.headers["Referrer-Policy"] == "no-referrer"


def test_the_dashboard_is_read_only(client):
    app = client.application
    methods = {m for rule in app.url_map.iter_rules() if rule.endpoint.startswith("web.") for m in rule.methods}
    assert methods == {"GET", "HEAD", "OPTIONS"}
    assert client.post("/dashboard/records").status_code == 405


def test_outside_local_mode_without_a_token_the_dashboard_says_what_to_set(store, tmp_path):
    client = make_client(store[0], tmp_path, github_token="ghp_x", webhook_secrets=("s",))
    response = client.get("/dashboard/")
    assert response.status_code == 403 and "PERFBOT_DASHBOARD_TOKEN" in response.get_data(as_text=True)
    assert client.get("/healthz").status_code == 200


def test_the_token_opens_the_dashboard_by_header_or_once_by_address(store, tmp_path):
    client = make_client(store[0], tmp_path, github_token="ghp_x", webhook_secrets=("s",), dashboard_token=TOKEN)
    refused = client.get("/dashboard/records")
    assert refused.status_code == 401 and refused.headers["WWW-Authenticate"].startswith("Bearer")
    assert "?token=" in refused.get_data(as_text=True)
    assert client.get("/dashboard/", headers={"Authorization": "Bearer nope"}).status_code == 401
    assert client.get("/dashboard/", headers={"Authorization": f"Bearer {TOKEN}"}).status_code == 200
    assert client.get(f"/dashboard/records?token={TOKEN}x").status_code == 401
    assert client.get_cookie(COOKIE) is None

    signed_in = client.get(f"/dashboard/records?state=all&token={TOKEN}&sort=slug")
    assert signed_in.status_code == 200
    assert 'content="0; url=/dashboard/records?state=all&amp;sort=slug"' in signed_in.get_data(as_text=True)
    cookie = signed_in.headers["Set-Cookie"]
    assert "HttpOnly" in cookie and "SameSite=Strict" in cookie and "Path=/dashboard" in cookie
    assert TOKEN not in cookie  # the cookie holds a digest of the token, not the token
    assert slugs(client.get("/dashboard/records?state=all&sort=slug")) == ALL_BY_SLUG

    client.set_cookie(COOKIE, "forged", path="/dashboard")
    assert client.get("/dashboard/").status_code == 401


def test_local_mode_needs_no_token_even_when_one_is_set(store, tmp_path):
    assert make_client(store[0], tmp_path, dashboard_token=TOKEN).get("/dashboard/").status_code == 200


def test_the_token_setting_is_read_like_the_other_secrets(tmp_path):
    secret = tmp_path / "token"
    secret.write_text("from-a-file\n")
    settings = Settings.from_env({"PERFBOT_INSTANCE_DIR": str(tmp_path), "PERFBOT_DASHBOARD_TOKEN_FILE": str(secret)})
    assert settings.dashboard_token == "from-a-file" and "from-a-file" not in repr(settings)
    empty = Settings.from_env({"PERFBOT_INSTANCE_DIR": str(tmp_path), "PERFBOT_DASHBOARD_TOKEN": ""})
    assert empty.dashboard_token is None


def test_an_empty_store_has_an_overview_too(tmp_path):
    db = Database(f"sqlite:///{tmp_path / 'empty.sqlite3'}")
    try:
        client = make_client(db, tmp_path)
        for url in ("/dashboard/", "/dashboard/records", "/dashboard/runs", "/dashboard/digests"):
            assert client.get(url).status_code == 200
        overview = client.get("/dashboard/").get_data(as_text=True)
        assert "No bench run yet. Comment <code>/perf verify SLUG</code>" in overview
        assert "run <code>perfbot digest</code>" in overview
        digests = client.get("/dashboard/digests").get_data(as_text=True)
        assert "No digest posted yet. The service posts one each week" in digests
        assert "<code>perfbot digest</code> to post one now" in digests and "<code>/perf digest</code>" in digests
    finally:
        db.dispose()


def test_milestones_come_only_from_well_formed_entries():
    summary = {"new": 2, "flag": True,
               "milestones": [{"name": "near C", "done": 3, "total": 8}, {"name": "bad", "done": "x", "total": 2},
                              {"name": "no total", "done": 1}, "text", {"name": "over", "done": 9, "total": 3}]}
    assert [(m["name"], m["percent"]) for m in milestones(summary)] == [("near C", 38), ("over", 100)]
    assert milestones({}) == milestones(None) == milestones({"milestones": "soon"}) == []
    assert summary_numbers(summary) == [("new", 2)] and summary_numbers(None) == []


def test_charts_are_inline_svg_with_their_own_ids_and_no_addresses():
    first = charts.sides_chart([("base", [("language", [0.09, 0.1]), ("C", [0.02, 0.021])])], "run 1",
                               y_label="seconds")
    second = charts.sides_chart([("head", [("language", [0.02, 0.021]), ("C", [0.019, 0.02])])], "run 2",
                                y_label="seconds")
    counted = charts.sides_chart([("head", [("language", [1234567, 1234567]), ("C", [411522, 411522])])], "run 3",
                                 y_label="steps")
    axis = "median {}; whisker: lowest to highest"
    assert f"<!-- {axis.format('seconds')} -->" in first and f"<!-- {axis.format('steps')} -->" in counted
    assert "<!-- 1200000 -->" in counted  # whole ticks, no "1e6" offset beside the axis
    # base against head on one scale: a 40x gain takes a log axis, so both bars stay readable
    gain = charts.sides_chart([("base", [("language", [4.0, 4.1])]), ("head", [("language", [0.1, 0.11])])], "g",
                              y_label="seconds")
    assert "<!-- 0.1 -->" in gain and "<!-- 1 -->" in gain and "10^" not in gain  # decades, written plainly
    ratios = charts.ratio_chart(["a", "b"], [(0.01, 0.02, 0.03), (800.0, 1000.0, 1200.0)], 2.0, "both ends")
    assert "<!-- 1000x -->" in ratios and "<!-- 0.02x -->" in ratios and "log scale" in ratios
    assert first.startswith("<svg ") and "http" not in first and "<!DOCTYPE" not in first
    ids_of = lambda svg: set(re.findall(r'id="([^"]+)"', svg))  # noqa: E731
    assert ids_of(first) and not ids_of(first) & ids_of(second)
    assert charts.pie_chart([("a$b$", 1)], "dollars are text").startswith("<svg ")
    assert charts.xy_chart(["a$"], [("bar", [1.0]), ("line", [2.0])], "x").startswith("<svg ")
    assert charts.pie_chart([("none", 0)]) == "" and charts.xy_chart([], [("bar", [1.0])]) == ""
    assert charts.sides_chart([], y_label="s") == "" and charts.ratio_chart([], []) == ""


MERMAID = re.compile(r"pie showData|xychart-beta|```mermaid|x-axis \[|class=\"language-mermaid")


def test_no_page_shows_mermaid_source_and_the_digest_draws_its_three_charts(client, ids):
    for name, url in pages(ids).items():
        assert not MERMAID.search(client.get(url).get_data(as_text=True)), name
    digest = client.get(f"/dashboard/digests/{ids['digest']}").get_data(as_text=True)
    drawn = re.findall(r'<div class="panel mermaid-chart"><svg role="img" aria-label="([^"]*)"', digest)
    assert drawn == ["New reports by track and backend",
                     "Verified fixes: ratio before (back) and after (front), lower is better",
                     "Milestones: percent done"]


def test_titles_show_their_markdown_as_code_and_plain_text(client, ids):
    code = "Modulo (<code>%</code>) is a shift-and-subtract loop in sum_mod"
    for url in ("/dashboard/", "/dashboard/records", f"/dashboard/records/{ids['perf_mod_shift_subtract']}"):
        text = client.get(url).get_data(as_text=True)
        assert code in text and "sum\\_mod" not in text and "`%`" not in text, url


def test_every_row_of_the_record_table_says_how_it_lints(client):
    text = client.get("/dashboard/records?state=all").get_data(as_text=True)
    cells = re.findall(r'<td class="num lint">(.*?)</td>', text, re.S)
    assert len(cells) == len(ALL_BY_SLUG) and all(re.search(r"clean|error|warning", c) for c in cells)
    assert '<span class="badge error">1 error</span>' in text and '<span class="badge warning">1 warning</span>' in text


def test_counts_are_in_the_singular_when_there_is_one(client, ids):
    record = client.get(f"/dashboard/records/{ids['perf_boxed_sum']}").get_data(as_text=True)
    assert "0 errors, 1 warning" in record and "(s)" not in record
    assert "8 threads" in client.get(f"/dashboard/records/{ids['perf_par_sort']}").get_data(as_text=True)
    from bot.core.verify.bench_view import column_names
    from bot.core.verify.run_parts import RunResult
    assert column_names(RunResult.from_json({"sides": [{"one_thread_seconds": [1.0]}]}), 1)[1] == "1 thread (median s)"


def test_a_lint_remedy_shows_its_code_as_code_never_literal_backticks(client, ids):
    page = client.get(f"/dashboard/records/{ids['perf_mod_shift_subtract']}").get_data(as_text=True)
    findings = page[page.index('id="findings"'):page.index('id="runs"')]
    assert "set <code>ratio:</code> to what the table measures" in findings and "`" not in findings


def test_a_record_shows_its_bisections_and_says_how_to_start_one(client, ids):
    bisected = client.get(f"/dashboard/records/{ids['perf_u24_arith_boxing']}").get_data(as_text=True)
    table = bisected[bisected.index('id="bisection-table"'):]
    assert "found" in table and "999999999999" in table and "first slow commit found" in table
    never = client.get(f"/dashboard/records/{ids['perf_boxed_sum']}").get_data(as_text=True)
    # never fixed: nothing about slowing down "again", the range to bisect instead
    assert "Never bisected" in never and "<code>/perf bisect perf_boxed_sum GOOD..BAD</code>" in never
    assert "again" not in never[never.index('id="bisections"'):never.index('id="fixes"')]
    assert "introduced by 999999999999" in bisected and "last good aaaaaaaaaaaa" in bisected


def test_an_errored_run_shows_its_error_and_no_empty_tables(client, ids):
    text = client.get(f"/dashboard/runs/{ids['run_error']}").get_data(as_text=True)
    assert re.search(r'<pre class="output error" id="run-error">the C translation does not compile: main.c:3', text)
    assert 'id="sides"' not in text and "samples-1" not in text and "No sample yet" not in text
    assert "<code>/perf verify perf_mod_shift_subtract</code>" in text


def test_a_pending_merge_pr_is_on_the_overview_and_on_both_records(client, ids):
    overview = client.get("/dashboard/").get_data(as_text=True)
    table = overview[overview.index('id="merge-table"'):]
    assert re.search(rf"<td>#14</td>\s*<td><a href=\"/dashboard/records/{ids['perf_boxed_sum']}\">perf_boxed_sum</a>"
                     r"</td>\s*<td>perf_float_boxing</td>", table)
    for slug in ("perf_boxed_sum", "perf_float_boxing"):
        assert "<td>#14</td>" in client.get(f"/dashboard/records/{ids[slug]}").get_data(as_text=True), slug
    assert 'id="merge-table"' not in client.get(f"/dashboard/records/{ids['perf_par_sort']}").get_data(as_text=True)


# measure -> (the tables' word, the chart's axis word)
MEASURE_WORDS = {"wall": ("s", "seconds"), "user": ("user s", "user seconds"),
                 "instructions": ("instructions", "instructions"), "metric:steps": ("steps", "steps")}


def test_a_run_page_says_what_was_measured_in_every_table_and_chart(tmp_path):
    """A seq run and a swept par run in each measure: a count of steps reads 1,234,567 steps, never seconds."""
    from bot.adapters.store.service_models import BenchRun
    from bot.core.verify.scaling import summary as sweep_summary
    from bot.core.verify.units import unit_of
    from tests.lead.test_dashboard_data import REPO, T0, _samples, _side

    db = Database(f"sqlite:///{tmp_path / 'units.sqlite3'}")
    try:
        seed(db)  # the records the runs belong to (perf_par_sort claims 8 threads)
        runs = {}
        with db.session() as session:
            for n, (measure, scale) in enumerate((("wall", 1.0), ("user", 1.0), ("instructions", 1e8),
                                                  ("metric:steps", 1e7))):
                seq = {**_side("head", "b" * 40, 0.1234567 * scale, 0.0411 * scale, 4, "pass"), "measure": measure}
                sweep = {count: _samples(0.8 * scale / count ** 0.8, 4) for count in (1, 2, 8)}
                par = {**_side("head", "e" * 40, 0.8 * scale, 0.8 * scale / 8 ** 0.8, 4, "fail", par=True),
                       "measure": measure, "one_thread_seconds": sweep[1], "n_threads_seconds": sweep[8],
                       "sweep": sweep_summary(sweep, 8, 0.75).as_dict()}
                for kind, slug, side in (("seq", "perf_boxed_sum", seq), ("par", "perf_par_sort", par)):
                    run = BenchRun(full_name=REPO, slug=slug, runner="mini-1", base_sha="a" * 40, head_sha=side["sha"],
                                   verdict="pass", message="done", result={"sides": [side]}, status="done",
                                   purpose="reproduce", host="mini-1.lan", progress={},
                                   created_at=T0 + timedelta(days=3, hours=n), started_at=T0 + timedelta(days=3),
                                   finished_at=T0 + timedelta(days=3, hours=n, minutes=5))
                    session.add(run)
                    session.flush()
                    runs[measure, kind] = (run.id, side)
        client = make_client(db, tmp_path)
        for (measure, kind), (run_id, side) in runs.items():
            word, axis = MEASURE_WORDS[measure]
            unit = unit_of(measure)
            page = client.get(f"/dashboard/runs/{run_id}").get_data(as_text=True)
            first, second = (side.get("language_seconds"), side.get("c_seconds")) if kind == "seq" else \
                (side["one_thread_seconds"], side["n_threads_seconds"])
            names = ("language", "C") if kind == "seq" else ("1 thread", "8 threads")
            sides = page[page.index('id="sides"'):page.index("</table>", page.index('id="sides"'))]
            assert f"{names[0]} (median {word})" in sides and f"{names[1]} (median {word})" in sides, measure
            assert f'<td class="num">{unit.text(statistics.median(first))}</td>' in sides, (measure, sides)
            assert f'<td class="num">{unit.text(statistics.median(second))}</td>' in sides, (measure, sides)
            pairs = page[page.index('id="samples-1"'):]
            assert f"{names[0]} ({word})</th>" in pairs and f"{names[1]} ({word})</th>" in pairs
            assert f'<td class="num">{unit.format(first[0], 6)}</td>' in pairs
            assert f"<!-- median {axis}; whisker: lowest to highest -->" in page  # the y axis, kept as a comment
            if kind == "par":
                scaling = page[page.index('id="scaling-1"'):]
                assert f'<th class="num">median ({word})</th>' in scaling
                assert f'<td class="num">{unit.text(statistics.median(sweep_of(side, 2)))}</td>' in scaling
            if unit.counted:
                assert "seconds" not in page and " s</td>" not in page and "(s)" not in page, measure
                assert not re.search(r"<td class=\"num\">\d{5,}\.\d", page), measure  # no count as 1234567.000000
                assert re.search(r"<td class=\"num\">\d{1,3}(,\d{3})+ " + re.escape(word) + "</td>", page), measure
        wall = client.get(f"/dashboard/runs/{runs['wall', 'seq'][0]}").get_data(as_text=True)
        assert '<td class="num">0.1225 s</td>' in wall and "language (s)</th>" in wall  # as it read before units
    finally:
        db.dispose()


def sweep_of(side: dict, count: int) -> list[float]:
    return side["sweep"]["seconds"][str(count)]


def test_a_pair_judged_again_alike_is_one_row_on_the_record_page(tmp_path):
    from bot.adapters.store.service_models import LlmAnswer
    from tests.lead.test_dashboard_data import T0

    db = Database(f"sqlite:///{tmp_path / 'again.sqlite3'}")
    ids = seed(db)
    with db.session() as session:  # the same two texts judged the same way again, asked from the other side
        session.add(LlmAnswer(kind="dedup", content_hash=f"{0:064d}", partner_hash=f"{3:064d}", model="offline",
                              prompt_version="v1", slug="perf_boxed_sum", partner_slug="perf_float_boxing",
                              answer={"verdict": "overlaps", "confidence": 0.35,
                                      "reasons": ["reproduction code of the same shape (MinHash Jaccard 0.48)"]},
                              created_at=T0 + timedelta(hours=1)))
    page = make_client(db, tmp_path).get(f"/dashboard/records/{ids['perf_float_boxing']}").get_data(as_text=True)
    dedup = page[page.index('id="dedup"'):page.index('id="history"')]
    assert dedup.count('class="badge overlaps"') == 1
    db.dispose()
