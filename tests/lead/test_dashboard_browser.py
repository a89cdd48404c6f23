"""The dashboard in a real browser: Playwright drives Debian's chromium against the app on a loopback port."""
from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import pytest

from bot.adapters.store.bench import bench_store
from bot.adapters.store.engine import Database
from bot.adapters.store.queue import DeliveryQueue
from bot.app import create_app, dashboard
from bot.config import Settings
from bot.core.verify.run_parts import RunProgress, RunResult, SideResult
from tests.lead.test_dashboard_data import REPO, seed
from tests.servers import LoopbackServer

# The Python package never fetches a browser by itself; this keeps any driver step from trying.
os.environ.setdefault("PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD", "1")
CHROMIUM = "/usr/bin/chromium"
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
        "--disable-component-update", "--disable-sync"]
README_SHOT = Path(__file__).resolve().parents[2] / "docs" / "dashboard-overview.png"
TOKEN = "browser-token"
MERMAID = re.compile(r"pie showData|xychart-beta|```mermaid|x-axis \[")

sync_api = pytest.importorskip("playwright.sync_api", reason="pip install 'perfbot[test]' for the browser tests")
if not Path(CHROMIUM).exists():
    pytest.skip("Debian's chromium is missing: scripts/ensure-browser installs it (as root)", allow_module_level=True)


class AppServer(LoopbackServer):
    name = "dashboard"

    def __init__(self, app) -> None:
        self.app = app

    def start(self) -> AppServer:
        self._serve(self.app)
        return self


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    db = Database(f"sqlite:///{tmp_path_factory.mktemp('browser') / 'perfbot.sqlite3'}")
    ids = seed(db)
    yield db, ids
    db.dispose()


def serve(db: Database, folder: Path, **settings) -> AppServer:
    app = create_app(Settings(instance_dir=folder, database_url=db.url, **settings), DeliveryQueue(db),
                     wanted_events=frozenset())
    return AppServer(app).start()


@pytest.fixture(scope="module")
def base(store, tmp_path_factory):
    server = serve(store[0], tmp_path_factory.mktemp("local"))
    yield server.url
    server.stop()


@pytest.fixture(scope="module")
def browser():
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield browser
        browser.close()


@pytest.fixture(scope="module")
def shots(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("screenshots")


class Visit:
    """A page in a fresh context that remembers every request and every console error it saw."""

    def __init__(self, browser) -> None:
        self.context = browser.new_context(viewport={"width": 1280, "height": 900})
        self.page = self.context.new_page()
        self.requests: list[str] = []
        self.errors: list[str] = []
        self.page.on("request", lambda request: self.requests.append(request.url))
        self.page.on("console", lambda message: message.type == "error" and self.errors.append(message.text))

    def follow(self, selector: str) -> None:
        """Click a link or submit button and wait for the next page's load event: a bare click returns once the
        navigation has begun, and a look right after it may still see the old page or half of the new one."""
        with self.page.expect_navigation():
            self.page.click(selector)

    def rows(self) -> list[str]:
        return self.page.locator("tr.record-row").evaluate_all("rows => rows.map(r => r.dataset.slug)")


@pytest.fixture
def visit(browser):
    opened = Visit(browser)
    yield opened
    opened.context.close()


def test_every_page_opens_loads_nothing_from_outside_and_is_screenshotted(visit, base, store, shots):
    ids = store[1]
    page = visit.page
    expected = {
        "/dashboard/": "Overview", "/dashboard/records?state=all": "Records",
        f"/dashboard/records/{ids['perf_boxed_sum']}": "perf_boxed_sum",
        f"/dashboard/records/{ids['perf_float_boxing']}": "perf_float_boxing",
        f"/dashboard/records/{ids['perf_u24_old']}": "perf_u24_old",
        f"/dashboard/records/{ids['perf_u24_arith_boxing']}": "perf_u24_arith_boxing",
        f"/dashboard/records/{ids['perf_mod_shift_subtract']}": "perf_mod_shift_subtract",
        f"/dashboard/records/{ids['perf_par_sort']}": "perf_par_sort",
        "/dashboard/runs": "Bench runs", f"/dashboard/runs/{ids['run_done']}": f"Bench run #{ids['run_done']}",
        f"/dashboard/runs/{ids['run_par']}": f"Bench run #{ids['run_par']}",
        f"/dashboard/runs/{ids['run_running']}": f"Bench run #{ids['run_running']}",
        f"/dashboard/runs/{ids['run_queued']}": f"Bench run #{ids['run_queued']}",
        f"/dashboard/runs/{ids['run_error']}": f"Bench run #{ids['run_error']}",
        "/dashboard/digests": "Digests", f"/dashboard/digests/{ids['digest']}": "Digest 2026-W19",
    }
    for number, (path, heading) in enumerate(expected.items()):
        response = page.goto(base + path)
        assert response.status == 200, path
        assert page.locator("main > h1").inner_text().startswith(heading), path
        # what a person reads: a chart is drawn, never its mermaid source
        assert not MERMAID.search(page.inner_text("main")), path
        page.screenshot(path=shots / f"{number:02d}-{path.strip('/').replace('/', '-').replace('?', '-')}.png",
                        full_page=True)
    missing = page.goto(f"{base}/dashboard/runs/999999")
    assert missing.status == 404 and "no bench run 999999" in page.content()
    assert page.locator("svg.chart").count() == 0  # the 404 page draws nothing
    page.goto(f"{base}/dashboard/records/{ids['perf_boxed_sum']}")
    assert page.locator("svg.chart").count() == 1 and page.locator("#findings + table").is_visible()
    # nothing ran: no alert fired, no script element exists, the report's own script stayed text
    page.goto(f"{base}/dashboard/records/{ids['perf_float_boxing']}")
    assert page.locator("script").count() == 0 and "<script>alert('body')</script>" in page.inner_text("article")
    assert all(url.startswith(base) for url in visit.requests), [u for u in visit.requests if not u.startswith(base)]
    # a Content-Security-Policy violation would show here; the one error expected is the 404 page's own status
    assert [e for e in visit.errors if "status of 404" not in e] == []


def test_the_overview_screenshot(visit, shots, tmp_path):
    """Always into the test's folder; into docs/ (the README's picture) only when asked to."""
    db = Database(f"sqlite:///{tmp_path / 'readme.sqlite3'}")
    seed(db, hostile=False)
    server = serve(db, tmp_path)
    try:
        assert visit.page.goto(f"{server.url}/dashboard/").status == 200
        visit.page.screenshot(path=shots / "overview.png", full_page=True)
    finally:
        server.stop()
        db.dispose()
    assert (shots / "overview.png").stat().st_size > 10_000
    if os.environ.get("PERFBOT_UPDATE_SCREENSHOTS") == "1":
        README_SHOT.parent.mkdir(exist_ok=True)
        shutil.copyfile(shots / "overview.png", README_SHOT)


def test_an_empty_store_says_on_every_page_what_to_do(visit, shots, tmp_path):
    db = Database(f"sqlite:///{tmp_path / 'empty.sqlite3'}")
    server = serve(db, tmp_path)
    hints = {"/dashboard/": "perfbot digest", "/dashboard/records": "perfbot new SLUG",
             "/dashboard/runs": "/perf verify SLUG", "/dashboard/digests": "perfbot digest"}
    try:
        for path, hint in hints.items():
            assert visit.page.goto(server.url + path).status == 200
            assert hint in visit.page.inner_text("main"), path
            visit.page.screenshot(path=shots / f"empty-{path.strip('/').replace('/', '-')}.png", full_page=True)
    finally:
        server.stop()
        db.dispose()


def test_filter_and_sort_the_table(visit, base):
    page = visit.page
    page.goto(f"{base}/dashboard/records")
    # by measured figure, worst first; the two nothing measured come after, never ranked by their claims
    assert visit.rows() == ["perf_boxed_sum", "perf_float_boxing", "perf_par_sort", "perf_mod_shift_subtract"]
    page.select_option("select[name=state]", "all")
    page.fill("input[name=q]", "u24")
    visit.follow("button[type=submit]")
    page.wait_for_url("**q=u24**")
    assert visit.rows() == ["perf_u24_arith_boxing", "perf_u24_old"]  # both 4.x: worst ratio first

    page.goto(f"{base}/dashboard/records?state=all")
    visit.follow("#sort-slug")
    assert visit.rows()[:3] == ["perf_boxed_sum", "perf_closed_thing", "perf_float_boxing"]
    visit.follow("#sort-slug")  # the same column again turns it round
    assert visit.rows()[:2] == ["perf_u24_old", "perf_u24_arith_boxing"]
    visit.follow("#sort-measured")
    # the unmeasured last by outcome and slug, never by the smallest claim
    assert visit.rows()[0] == "perf_boxed_sum" and visit.rows()[-1] == "perf_u24_old"
    visit.follow("#sort-measured")
    assert visit.rows()[0] == "perf_float_boxing"
    page.select_option("select[name=outcome]", "accurate")
    visit.follow("button[type=submit]")
    assert visit.rows() == ["perf_float_boxing"]
    page.select_option("select[name=outcome]", "")
    page.select_option("select[name=track]", "par")
    visit.follow("button[type=submit]")
    assert visit.rows() == ["perf_par_sort"]
    assert page.locator("select[name=state]").input_value() == "all"  # the filter form keeps what was chosen


def test_follow_links_from_the_table_to_a_record_to_its_bench_run_and_back(visit, base, store):
    # expect() retries until the next page is in: a click returns once navigation has begun, not ended
    page, expect = visit.page, sync_api.expect
    heading = page.locator("main > h1")
    page.goto(f"{base}/dashboard/")
    visit.follow("nav >> text=Records")
    visit.follow("tr.record-row[data-slug=perf_boxed_sum] >> text=perf_boxed_sum")
    expect(heading).to_have_text(re.compile(r"^perf_boxed_sum"))
    visit.follow(f"text=Bench run #{store[1]['run_done']}")
    expect(page).to_have_url(re.compile(f"/dashboard/runs/{store[1]['run_done']}$"))
    expect(page.locator("#sides")).to_be_visible()
    expect(page.locator("svg.chart")).to_have_count(1)
    visit.follow("#run-record")
    expect(heading).to_have_text(re.compile(r"^perf_boxed_sum"))
    visit.follow("text=perf_float_boxing")  # a dedup verdict names its partner
    expect(heading).to_have_text(re.compile(r"^perf_float_boxing"))
    visit.follow("nav >> text=Digests")
    visit.follow("text=2026-W19")
    expect(page).to_have_url(re.compile(r"/dashboard/digests/\d+$"))
    expect(page.locator("progress")).to_have_count(2)


def test_a_live_run_page_refreshes_itself_until_the_run_is_done(visit, base, store, monkeypatch):
    monkeypatch.setattr(dashboard, "LIVE_SECONDS", 1)  # the app runs in this process: no need to wait 5 s a look
    db = store[0]
    run_id = bench_store.queue_run(db, REPO, "perf_par_sort", base="a" * 40, head="c" * 40, purpose="fix")
    page = visit.page
    page.goto(f"{base}/dashboard/runs/{run_id}")
    assert "waiting for a worker" in page.inner_text("#run-progress")
    bench_store.start_run(db, run_id, "mini-2", "mini-2.lan")
    bench_store.save_progress(db, run_id, RunProgress("head", 2, 30),
                              RunResult((SideResult("head", "c" * 40, (0.8, 0.82), (0.2, 0.21), par=True),)))
    # locators, not wait_for_function: the page's Content-Security-Policy forbids evaluating strings
    sync_api.expect(page.locator("#run-progress")).to_contain_text("head: 2 of at most 30", timeout=15_000)
    assert page.locator("svg.chart").count() == 1
    bench_store.finish_run(db, run_id, "pass", "speedup 4.0x", RunResult(verdict="pass"))
    sync_api.expect(page.locator("#run-message")).to_have_text("speedup 4.0x", timeout=15_000)
    assert page.locator("meta[http-equiv=refresh]").count() == 0  # done: it stops refreshing


def test_outside_local_mode_the_token_is_asked_for_then_kept_in_a_cookie(browser, store, tmp_path, shots):
    server = serve(store[0], tmp_path, github_token="ghp_x", webhook_secrets=("s",), dashboard_token=TOKEN)
    try:
        stranger = Visit(browser)
        refused = stranger.page.goto(f"{server.url}/dashboard/")
        assert refused.status == 401 and "Not signed in" in stranger.page.inner_text("h1")
        stranger.page.screenshot(path=shots / "token-refused.png")
        assert stranger.page.goto(f"{server.url}/dashboard/?token=wrong").status == 401
        stranger.context.close()

        person = Visit(browser)
        page = person.page
        page.goto(f"{server.url}/dashboard/records?state=all&token={TOKEN}")
        page.wait_for_url(f"{server.url}/dashboard/records?state=all")  # the token left the address bar
        assert len(person.rows()) == 7
        cookie = next(c for c in person.context.cookies() if c["name"] == "perfbot_dashboard")
        assert cookie["httpOnly"] and cookie["sameSite"] == "Strict" and TOKEN not in cookie["value"]
        person.follow("nav >> text=Overview")
        assert page.locator("main > h1").inner_text() == "Overview"
        person.context.close()
    finally:
        server.stop()
