"""A record's standing as the MCP tools answer it: claim, latest measurement, outcome, fix, culprit.

DESIGN.md asks for one pure `standing` function in bot/core that every surface renders. Until it lands, this
module is the one place the MCP server reads a standing from the existing store queries: swap the body of
`record_standing` for that function and every tool follows.
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
    """The record `slug` (or a former name of it) in `full_name`: its claim, its latest finished measurement,
    its outcome in the verdict words of docs/verification.md, its fix and the culprit a bisection found."""
    with db.session() as session:
        matches = find_records(session, slug, full_name)
        if not matches:
            raise UnknownRecord(slug)
        detail = record_detail(session, *matches[0])
    runs = runs_for(db, detail["slug"], limit=RUNS_SHOWN, full_name=full_name)
    finished = next((run for run in runs if run["status"] == "done"), None)
    bisections = bisect_store.for_record(db, full_name, detail["slug"])
    culprit = next((b for b in bisections if b["culprit"]), None)
    fix, claim = words.of_fix(detail["verdict"]), words.of_claim(detail["reproduced"])
    return {
        "slug": detail["slug"], "title": detail["title"], "path": detail["path"], "state": detail["state"],
        "merged_into": detail["merged_into"], "aliases": detail["aliases"],
        "claim": {"track": detail["track"], "backend": detail["backend"], "threads": detail["threads"],
                  "ratio": detail["ratio"], "ratio_kind": detail["ratio_kind"], "table_ratio": detail["table_ratio"]},
        "measurement": measurement(finished),
        "outcome": {"fix": fix.key if fix else None, "claim": claim.key if claim else None,
                    "text": words.of_record(detail["verdict"], detail["reproduced"])},
        "fix": {"field": detail["fix"],
                "attached": [{k: f.as_dict()[k] for k in ("branch", "state", "pr_number", "head_sha", "token_delta")}
                             for f in fixes_for(db, full_name, detail["slug"])]},
        "culprit": ({"commit": culprit["culprit"], "bisection": culprit["id"], "message": culprit["message"]}
                    if culprit else None),
        "lint": {"errors": detail["errors"], "warnings": detail["warnings"]},
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
