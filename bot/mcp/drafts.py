"""A draft an agent hands the server, as text or as a path, and what lint and dedup say about it."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from bot.adapters.store.reviews.dedup_store import VerdictCache, not_duplicates
from bot.core.dedup.merge_plan import merge_plan
from bot.core.lint.audit import audit
from bot.core.lint.rules import lint
from bot.core.reports.parse import parse
from bot.core.reports.records import REPORT_DIR, ParseResult
from bot.errors import Invalid
from bot.mcp.catalog import Catalog
from bot.services.dedup.review import Dedup, ReadOnlyCache, Reviewer

# A report is at most 500 words of prose plus its code and tables: a few kB. A quarter of a megabyte is room
# for any honest draft, and keeps one call from parsing megabytes.
MAX_DRAFT_BYTES = 256 * 1024
WORD_BUDGET = 500


class DraftError(Invalid):
    """A draft that cannot be read or judged: what is wrong, and what to send instead."""


def read_draft(text: str | None, path: str | None, name: str | None) -> tuple[str, bytes]:
    """(the file name the draft is judged under, its bytes) from exactly one of `text` and `path`."""
    if (text is None) == (path is None):
        raise DraftError("neither or both of `text` and `path` were given",
                         "give exactly one of `text` (the draft's markdown) or `path` (a .md file)")
    if path is not None:
        file = Path(path).expanduser()
        if file.suffix != ".md" or not file.is_file():
            raise DraftError("not a .md file", "give the draft's path, e.g. drafts/perf_my_slug.md", at=path)
        if file.stat().st_size > MAX_DRAFT_BYTES:
            raise DraftError(f"{file.stat().st_size} bytes, over the {MAX_DRAFT_BYTES} bytes a draft may have",
                             "a report is at most 500 words of prose plus its code", at=path)
        return str(file), file.read_bytes()
    assert text is not None
    data = text.encode("utf-8", errors="replace")
    if not text.strip():
        raise DraftError("the draft is empty", "send the report's markdown (front matter, title, sections)")
    if len(data) > MAX_DRAFT_BYTES:
        raise DraftError(f"the draft is {len(data)} bytes, over the {MAX_DRAFT_BYTES} bytes a draft may have",
                         "a report is at most 500 words of prose plus its code")
    return name or f"{REPORT_DIR}/perf_draft.md", data


def lint_answer(catalog: Catalog, file: str, data: bytes) -> dict[str, Any]:
    """Every finding `perfbot lint` gives for the draft: line, rule, severity, message and remedy."""
    result = parse(file, data, catalog.reading)
    findings = list(lint(result, path=file, known_slugs=catalog.known_slugs(), word_budget=WORD_BUDGET,
                         reading=catalog.reading))
    if result.record is not None:
        findings += audit(result.record, file)
    errors = sum(f.is_error for f in findings)
    return {"file": file, "clean": not findings, "errors": errors,
            "warnings": sum(f.severity.value == "warning" for f in findings),
            "problems": [{k: v for k, v in f.as_dict().items() if k != "file"} for f in findings]}


def dedup_answer(catalog: Catalog, reviewer: Reviewer, file: str, data: bytes, k: int) -> dict[str, Any]:
    """Candidates with verdict, confidence and reasons; when some overlap, the merge rule's plan and a draft."""
    result: ParseResult = parse(file, data, catalog.reading)
    if result.record is None:
        raise DraftError("nothing to compare: the draft has no report in it", "lint_draft says why", at=file)
    draft = result.record
    index, records, summaries = catalog.current()
    # A draft is no record: cached verdicts are read (an agent reviewer's cost little then), never stored; the
    # offline reviewer's verdicts cost less to make again than to look up.
    offline = getattr(reviewer, "name", "offline") == "offline"
    cache = None if offline else ReadOnlyCache(VerdictCache(catalog.db))
    people = not_duplicates(catalog.db, catalog.full_name)
    reviews = Dedup([], reviewer, cache, people, k=k, index=index, records=records).review(draft)
    overlapping = [r for r in reviews if r.overlapping]
    answer: dict[str, Any] = {
        "draft": draft.slug, "compared_with": len(index), "reviewer": getattr(reviewer, "name", "offline"),
        "overlaps": bool(overlapping),
        "candidates": [{"slug": r.old, "path": summaries.get(r.old, {}).get("path", f"{REPORT_DIR}/{r.old}.md"),
                        "title": summaries.get(r.old, {}).get("title"), "verdict": r.verdict.kind,
                        "overruled_by_people": r.overruled,
                        "confidence": r.verdict.confidence, "reasons": list(r.verdict.reasons),
                        "retrieval": {"score": r.candidate.score, "text": r.candidate.text,
                                      "shape": r.candidate.shape, "places": r.candidate.locations}}
                       for r in reviews],
    }
    if not len(index):
        answer["note"] = (f"the store holds no live records of {catalog.full_name}: nothing was compared; run "
                          "`perfbot sync --repo PATH` first")
    if not overlapping:
        answer["next"] = "new: no existing report overlaps; lint it clean and write it to devs/issues/"
        return answer
    plan = merge_plan(draft, [records[r.old] for r in overlapping])
    best = overlapping[0].verdict
    answer["merge"] = {**plan.as_dict(), "merged_report": best.merged_report,
                       "merged_report_problems": list(best.merge_problems)}
    answer["next"] = ("overlaps: delete the files in merge.delete and, in the same commit, write merge.write "
                      "covering merge.must_cover (merge.merged_report is a start); then lint_draft it")
    return answer

