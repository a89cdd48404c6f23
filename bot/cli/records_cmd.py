"""`perfbot list` and `perfbot show`: the records as people and scripts read them."""
from __future__ import annotations

import json

import click

from bot.adapters.store.bench.bench_store import latest_finished, runs_for
from bot.adapters.store.bench.fix_store import fixes_for
from bot.adapters.store.lead.standing_queries import all_standings
from bot.adapters.store.queries import SORTS, RecordFilter, find_records, list_records, record_detail
from bot.bisect import store as bisect_store
from bot.cli.common import db_option, open_database, reports_errors
from bot.core.lead.campaign import apart_key, rank_key, tally
from bot.core.lead.standing import Standing
from bot.core.lead.wording import headline, measure_words, ratio_text, said
from bot.core.reports.records import BACKENDS, TRACKS
from bot.core.verify import verdict_words as words
from bot.core.verify.bench_run import BenchRun
from bot.errors import Invalid, NotFound

STATES = ("open", "regressed", "fixed", "closed", "merged", "deleted")
format_option = click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)


@click.command("list")
@click.option("--state", "states", multiple=True, type=click.Choice((*STATES, "all")),
              help="Records in these states (repeatable; default: open).")
@click.option("--track", type=click.Choice(TRACKS))
@click.option("--backend", type=click.Choice(BACKENDS))
@click.option("--min-ratio", type=click.FloatRange(min=0), help="Only records whose claimed ratio is at least this.")
@click.option("--errors/--clean", "with_errors", default=None, help="Only records with (or without) lint errors.")
@click.option("--full-name", default=None,
              help="Only this repository (owner/name or path), when the store holds several.")
@click.option("--sort", type=click.Choice(sorted(SORTS)), default="ratio", show_default=True)
@format_option
@db_option
@reports_errors
def list_command(states, track, backend, min_ratio, with_errors, full_name, sort, fmt, db_url) -> None:
    """List records, worst ratio first."""
    chosen = STATES if "all" in states else (tuple(states) or ("open",))
    flt = RecordFilter(chosen, track, backend, min_ratio, with_errors, full_name, sort)
    with open_database(db_url) as db:
        with db.session() as session:
            rows = list_records(session, flt)
        last = latest_finished(db)
        standings = all_standings(db, full_name)
    rows = [_in_words(row, standings.get((row["repo"], row["slug"]))) for row in rows]
    if sort == "ratio":  # rankings use measured figures only: one without is listed after, by outcome and slug
        measured = sorted((r for r in rows if r["measured"] is not None),
                          key=lambda r: rank_key(standings[(r["repo"], r["slug"])]))
        apart = sorted((r for r in rows if r["measured"] is None), key=lambda r: (
            apart_key(standings[(r["repo"], r["slug"])]) if (r["repo"], r["slug"]) in standings else ("", r["slug"])))
        rows = measured + apart  # the order of campaign.ranking: its claim never ranks a record
    for row in rows:
        row["last_run"] = _run_in_words(last.get((row["repo"], row["slug"])))
    if fmt == "json":
        click.echo(json.dumps(rows, indent=2))
        return
    if not rows:
        click.echo("no records match; run `perfbot sync --repo PATH` first if the store is empty")
        return
    click.echo(f"{'slug':<36} {'track':<5} {'backend':<7} {'measured':>22} {'claimed':>22} {'of':<14} {'state':<8} "
               f"{'lint':<9} {'standing':<28} title")
    for row in rows:
        lint = f"{row['errors']}E {row['warnings']}W" if row["errors"] or row["warnings"] else "clean"
        merged = f" (merged into {row['merged_into']})" if row["merged_into"] else ""
        click.echo(f"{row['slug']:<36} {row['track'] or '-':<5} {row['backend'] or '-':<7} "
                   f"{_with_measure(row['measured'], row['measure']) if row['measured'] else 'not ranked':>22} "
                   f"{_with_measure(row['ratio'], row['claim_measure']):>22} {row['ratio_kind']:<14} "
                   f"{row['state']:<8} {lint:<9} {row['headline']:<28} {row['title']}{merged}")
    listed = [s for s in standings.values() if s.slug in {row["slug"] for row in rows}]
    t = tally(listed)
    click.echo(f"{len(rows)} record(s): {t.live} open, {t.ranked} measured, {t.apart} not ranked, {t.overstated} "
               f"overstated, {t.culprits} with a culprit, {t.waiting_merge} fix(es) waiting for merge, "
               f"{t.fixed_in_main} fixed in main")


@click.command("show")
@click.argument("slug")
@click.option("--full-name", default=None, help="Which repository, when the store holds several with this slug.")
@format_option
@db_option
@reports_errors
def show_command(slug: str, full_name: str | None, fmt: str, db_url: str | None) -> None:
    """Show one record: its facts, its lint findings and its history (also by a former slug)."""
    with open_database(db_url) as db, db.session() as session:
        matches = find_records(session, slug, full_name)
        if not matches:
            raise NotFound(f"no record named {slug!r}", "`perfbot list --state all` shows every record", name=slug)
        if len(matches) > 1:
            repos = ", ".join(key for _, key in matches)
            raise Invalid(f"{slug!r} exists in several repositories ({repos})", "pass --full-name")
        found = record_detail(session, *matches[0])
    with open_database(db_url) as db:
        detail = _in_words(found, all_standings(db, found["repo"]).get((found["repo"], found["slug"])))
        detail["bench_runs"] = [_run_in_words(run) for run in runs_for(db, detail["slug"], full_name=detail["repo"])]
        detail["bisections"] = [{key: b[key] for key in ("id", "status", "outcome", "good", "bad", "culprit",
                                                         "message")}
                                for b in bisect_store.for_record(db, detail["repo"], detail["slug"])]
        detail["fixes"] = [f.as_dict() for f in fixes_for(db, detail["repo"], detail["slug"])]
    if fmt == "json":
        click.echo(json.dumps(detail, indent=2))
        return
    _print_detail(detail)


def _run_in_words(run: BenchRun | None) -> dict | None:
    """A bench run with its answer for `verdict` and without its samples (`perfbot verify --format json` has them)."""
    if run is None:
        return None
    told = words.of_run(run)
    shown = {key: value for key, value in run.as_dict().items() if key != "result"}
    shown["verdict"], shown["verdict_text"] = (told.key, told.said) if told else (None, str(run.status))
    return shown


def _with_measure(ratio: float | None, measure: str | None) -> str:
    """'218x in instructions': every figure with its measure, rounded as every view rounds it."""
    return f"{ratio_text(ratio)} in {measure_words(measure)}" if ratio is not None else "-"


def _in_words(row: dict, standing: Standing | None) -> dict:
    """A record with its standing (core/lead/standing.py), the words and figures of every other view: its outcome,
    the measured figure it is ranked by (None: not ranked), and the whole sentence."""
    row = {key: value for key, value in row.items() if key not in ("verdict", "reproduced")}
    if standing is None:
        return {**row, "outcome": None, "headline": "-", "standing": "not measured", "measured": None,
                "measure": None, "claim_measure": None,
                "real": None, "overstated": False, "fixed_in_main": False, "culprit": None}
    return {**row, "outcome": str(standing.outcome), "headline": headline(standing), "standing": said(standing),
            "measured": standing.ranked_figure, "real": standing.checked.real, "overstated": standing.overstated,
            "measure": standing.measured.figure.measure if standing.measured else None,
            "claim_measure": standing.claim.measure,
            "fixed_in_main": standing.fixed_in_main,
            "culprit": standing.culprit.commit if standing.culprit else None}


def _print_detail(d: dict) -> None:
    merged = f" into {d['merged_into']}" if d["merged_into"] else ""
    click.echo(f"{d['slug']}: {d['title'] or '(no title)'}")
    click.echo(f"  state     {d['state']}{merged}    repo {d['repo']}    file {d['path']}")
    ratio = _with_measure(d["ratio"], d["claim_measure"])
    table = f" (table says {ratio_text(d['table_ratio'])})" if d["table_ratio"] is not None else ""
    click.echo(f"  track     {d['track'] or '-'}    backend {d['backend'] or '-'}    threads {d['threads'] or '-'}"
               f"    claimed {ratio}{table}")
    click.echo(f"  fix       {d['fix'] or '-'}    supersedes {', '.join(d['supersedes']) or '-'}"
               + (f"    host {d['host']}" if d.get("host") else ""))
    for explanation in d.get("derived", {}).values():  # facts not stated in front matter: where each came from
        click.echo(f"  {explanation}")
    click.echo(f"  standing  {d['standing']}")
    if len(d["aliases"]) > 1:
        click.echo(f"  also known as {', '.join(a for a in d['aliases'] if a != d['slug'])}")
    click.echo(f"findings ({len(d['findings'])}):" if d["findings"] else "findings: none, the report lints clean")
    for f in d["findings"]:
        click.echo(f"  line {f['line']}: {f['severity']} {f['rule']}: {f['message']}")
        if f.get("remedy"):
            click.echo(f"      fix: {f['remedy']}")
    if d.get("fixes"):
        click.echo(f"fixes ({len(d['fixes'])}):")
        for fix in d["fixes"]:
            pull = f"PR #{fix['pr_number']}  " if fix["pr_number"] else ""
            delta = f"{fix['token_delta']:+d} tokens" if fix["token_delta"] is not None else "tokens unknown"
            click.echo(f"  {fix['branch']}  {pull}{fix['state']}  {(fix['head_sha'] or '-')[:12]}  "
                       f"+{fix['additions']} -{fix['deletions']} in {fix['changed_files']} file(s), {delta}")
    if d.get("bench_runs"):
        click.echo(f"bench runs ({len(d['bench_runs'])}):")
        for run in d["bench_runs"]:
            click.echo(f"  {run['at'][:19]}  #{run['id']}  {run['purpose']:<9} {run['verdict_text']:<16} "
                       f"{run['runner']}  {run['message']}")
    if d.get("bisections"):
        click.echo(f"bisections ({len(d['bisections'])}):")
        for b in d["bisections"]:
            culprit = f"culprit {b['culprit'][:12]}" if b["culprit"] else b["outcome"] or b["status"]
            click.echo(f"  #{b['id']}  {b['good'][:12]}..{b['bad'][:12]}  {culprit}  {b['message']}")
    click.echo(f"history ({len(d['history'])} revision(s)):")
    for h in d["history"]:
        click.echo(f"  {h['date'][:19]}  {h['commit'][:10]}  {h['change']:<8}  {h['author']} <{h['email']}>  "
                   f"{h['path']}")
