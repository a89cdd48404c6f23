"""The read-only dashboard under /dashboard: overview, records, a record, bench runs, digests; HTML, no JavaScript."""
from __future__ import annotations

from typing import Any

from flask import Blueprint, abort, current_app, redirect, render_template, request, url_for
from markupsafe import Markup

from bot.adapters.charts import ratio_chart
from bot.adapters.store.engine import Database
from bot.adapters.store.lead import dashboard_queries as queries
from bot.adapters.store.lead.standing_queries import all_standings
from bot.adapters.templates import templated
from bot.app import dashboard_auth
from bot.app import dashboard_render as render
from bot.core.lead import wording
from bot.core.lead.campaign import ranking, tally
from bot.core.verify import verdict_words as words
from bot.digest import store as digest_store

PREFIX = "/dashboard"
# The near-C threshold every seq claim is judged against (repo config may move it; the chart only orients).
NEAR_C = 2.0
LIVE_SECONDS = 5
# Ids are INTEGER columns (32 bits on PostgreSQL, 64 on SQLite): a larger number in an address can
# name nothing, so it does not match the route (404) instead of reaching the database (500).
ID = "int(max=2147483647)"

web = Blueprint("web", __name__)
dashboard = Blueprint("dashboard", __name__, url_prefix=PREFIX, template_folder="../templates/web")


@web.get("/")
def home():
    return redirect(url_for("web.dashboard.overview"))


def _db() -> Database:
    return current_app.extensions["perfbot"]["queue"].db


@dashboard.before_request
def _authorised():
    return dashboard_auth.check(current_app.extensions["perfbot"]["settings"], request.script_root + PREFIX)


@dashboard.after_request
def _headers(response):
    return dashboard_auth.secure(response)


@dashboard.app_context_processor
def _helpers() -> dict:
    return {"render": render, "words": words, "wording": wording}


for _name, _function in render.FILTERS.items():
    dashboard.add_app_template_filter(_function, f"dash_{_name}")


@dashboard.errorhandler(404)
def _not_found(error):
    return render_template("not_found.html", what=getattr(error, "description", "")), 404


@dashboard.get("/")
def overview():
    with _db().session() as session:
        numbers = queries.overview(session)
    standings = all_standings(_db()).values()
    ranked, apart = ranking(standings)
    latest = next(iter(digest_store.list_digests(_db(), limit=1)), None)
    seq = [s for s in ranked if s.kind == "language/C"]  # one kind of ratio per chart: language/C
    return render_template(
        "overview.html", numbers=numbers, tally=tally(standings), ranked=ranked, apart=apart, latest=latest,
        milestones=render.milestones(latest["summary"]) if latest else [],
        # The adapter draws from numbers and escapes its labels: its SVG is ours, not the reports' text.
        ratio_chart=Markup(ratio_chart(
            [s.slug for s in seq], [(m.low, m.point, m.high) for s in seq if s.measured for m in [s.measured.figure]],
            NEAR_C, f"open seq reports, measured, against the {NEAR_C:g}x line", "language / C")))


@dashboard.get("/records")
def records():
    query = queries.TableQuery.from_args(request.args)
    standings = all_standings(_db())
    with _db().session() as session:
        rows = queries.record_table(session, query, standings)
        choices = queries.choices(session)
    return render_template("records.html", rows=rows, query=query, choices=choices, states=queries.STATES,
                           outcomes=queries.OUTCOMES, sort_link=lambda column: _sort_link(query, column))


def _sort_link(query: queries.TableQuery, column: str) -> str:
    """Clicking the current sort column turns it round; another column starts in its natural order."""
    order = queries.NATURAL_ORDER[column]
    if column == query.sort:
        order = "asc" if query.order == "desc" else "desc"
    args = {"state": query.state, "track": query.track, "backend": query.backend, "q": query.text,
            "outcome": query.outcome, "sort": column, "order": order}
    values: dict[str, Any] = {k: v for k, v in args.items() if v}
    return url_for(".records", **values)


@dashboard.get(f"/records/<{ID}:record_id>")
def record(record_id: int):
    with _db().session() as session:
        detail = queries.record_page(session, record_id)
        if detail is None:
            abort(404, f"no record {record_id}")
        partners = queries.partner_ids(session, detail["repo"], [v["partner"] for v in detail["verdicts"]] +
                                       [o["a"] for o in detail["overrides"]] + [o["b"] for o in detail["overrides"]] +
                                       [m[k] for m in detail["merges"] for k in ("keep", "merged_from")])
    # A swept par run shows its curve under its samples: what a record's history of scaling looks like.
    charts = {run.id: render.run_chart(run, detail["threads"]) + render.scaling(run)["chart"]
              for run in detail["runs"]}
    standing = all_standings(_db(), detail["repo"]).get((detail["repo"], detail["slug"]))
    return render_template("record.html", r=detail, s=standing, partners=partners, charts=charts,
                           report=render.markdown(detail["content"]))


@dashboard.get("/runs")
def runs():
    with _db().session() as session:
        listed = queries.run_list(session)
    return render_template("runs.html", runs=listed)


@dashboard.get(f"/runs/<{ID}:run_id>")
def run(run_id: int):
    with _db().session() as session:
        found = queries.run_page(session, run_id)
    if found is None:
        abort(404, f"no bench run {run_id}")
    # The record as it stands now, in the words of every other view: this run may be one of several it weighs.
    standing = all_standings(_db(), found.repo).get((found.repo, found.slug))
    return render_template("run.html", run=found, s=standing, live=not found.done, refresh=LIVE_SECONDS,
                           chart=render.run_chart(found, found.threads),
                           tables=render.sample_tables(found, found.threads), scaling=render.scaling(found))


@dashboard.get("/digests")
def digests():
    return render_template("digests.html", digests=digest_store.list_digests(_db()))


@dashboard.get(f"/digests/<{ID}:digest_id>")
def digest(digest_id: int):
    found = digest_store.get_digest(_db(), digest_id)
    if found is None:
        abort(404, f"no digest {digest_id}")
    return render_template("digest.html", digest=found, body=render.digest_markdown(found["body"]),
                           milestones=render.milestones(found["summary"]),
                           numbers=render.summary_numbers(found["summary"]))


# A feature package's pages live with it (bot/digest/templates/web/): a blueprint per package, without routes,
# lends Flask that folder, so render_template finds digest.html there and the base.html it extends here.
for package in templated("templates/web"):
    dashboard.register_blueprint(Blueprint(f"{package.rpartition('.')[2]}_pages", package,
                                           template_folder="templates/web"))
web.register_blueprint(dashboard)
