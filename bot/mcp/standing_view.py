"""A record's standing as the MCP tools answer it: claim, latest measurement, outcome, fix, culprit.

DESIGN.md asks for one pure `standing` function in bot/core that every surface renders. Until it lands, this
module's `standing` is the one place the MCP tools render a standing from the existing store rows: swap it
for core's function (and `record_standing`'s reads for what that function takes) and every tool follows.
"""
from __future__ import annotations

from typing import Any

from bot.adapters.store.bench import bisect_store
from bot.adapters.store.bench.bench_store import runs_for
from bot.adapters.store.bench.fix_store import fixes_for
from bot.adapters.store.engine import Database
from bot.adapters.store.queries import find_records, record_detail
from bot.core.verify import verdict_words as words

RUNS_SHOWN = 5


class UnknownRecord(LookupError):
    """No record answers to the slug in this repository; the message says what to do."""


def record_standing(db: Database, full_name: str, slug: str) -> dict[str, Any]:
    """The record `slug` (or a former name of it) in `full_name`, with its runs, fixes and bisections read."""
    with db.session() as session:
        matches = find_records(session, slug, full_name)
        if not matches:
            raise UnknownRecord(slug)
        detail = record_detail(session, *matches[0])
    runs = runs_for(db, detail["slug"], limit=RUNS_SHOWN, full_name=full_name)
    culprit = next((b for b in bisect_store.for_record(db, full_name, detail["slug"]) if b["culprit"]), None)
    attached = [f.as_dict() for f in fixes_for(db, full_name, detail["slug"])]
    return {**standing(detail, next((run for run in runs if run["status"] == "done"), None), attached, culprit),
            "aliases": detail["aliases"], "lint": {"errors": detail["errors"], "warnings": detail["warnings"]}}


def standing(row: dict, finished: dict | None, attached: list[dict] | None = None,
             culprit: dict | None = None) -> dict[str, Any]:
    """A record's standing from its stored row (`queries.record_summary`), its latest finished run, the fixes
    attached to it and the bisection that found a culprit: the one rendering every tool answers with."""
    fix, claim = words.of_fix(row["verdict"]), words.of_claim(row["reproduced"])
    return {
        "slug": row["slug"], "title": row["title"], "path": row["path"], "state": row["state"],
        "merged_into": row["merged_into"],
        "claim": {"track": row["track"], "backend": row["backend"], "threads": row["threads"],
                  "ratio": row["ratio"], "ratio_kind": row["ratio_kind"], "table_ratio": row["table_ratio"]},
        "measurement": measurement(finished),
        "outcome": {"fix": fix.key if fix else None, "claim": claim.key if claim else None,
                    "text": words.of_record(row["verdict"], row["reproduced"])},
        "fix": {"field": row["fix"],
                "attached": [{k: f[k] for k in ("branch", "state", "pr_number", "head_sha", "token_delta")}
                             for f in attached or []]},
        "culprit": ({"commit": culprit["culprit"], "bisection": culprit["id"], "message": culprit["message"]}
                    if culprit else None),
    }


def measurement(run: dict | None) -> dict[str, Any] | None:
    """A finished run's measured figure (the last side's interval and measure) and its answer, without samples."""
    if run is None:
        return None
    told = words.of_run(run)
    sides = (run.get("result") or {}).get("sides") or []
    side = sides[-1] if sides else {}
    return {"run": run["id"], "purpose": run["purpose"], "at": run["at"], "head": run["head"],
            "verdict": told.key if told else None, "text": told.text if told else run["status"],
            "interval": side.get("interval"), "measure": side.get("measure"), "against": side.get("against"),
            "message": run["message"]}
