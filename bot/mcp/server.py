"""`perfbot mcp`: the records, the linter and dedup as MCP tools, for agents that write reports.

Read-only by construction: every tool reads the store, the repository's history or the draft it is given.
None runs a report's code, writes to GitHub or git, or queues a bench run; the one thing written is the
retrieval feature cache the service keeps too (derived from records, by content hash).
"""
from __future__ import annotations

import difflib
import functools
from collections.abc import Callable
from importlib import resources
from typing import Annotated, Any, Literal, ParamSpec, TypeVar

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import ToolAnnotations
from pydantic import Field

from bot.adapters.store.bench.bench_store import runs_for, unfinished_runs
from bot.adapters.store.queries import find_records
from bot.core import refusals
from bot.core.lint.rules import RULES
from bot.errors import NotFound, UserError
from bot.mcp.catalog import Catalog
from bot.mcp.drafts import dedup_answer, lint_answer, read_draft
from bot.mcp.standing_view import measurement, rendered
from bot.services.dedup.review import Reviewer

# devs/ISSUE_FORMAT.md as package data: an installed perfbot has no checkout to read it from (a test keeps it equal)
FORMAT_FILE = resources.files("bot.mcp") / "ISSUE_FORMAT.md"
READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False)
INSTRUCTIONS = ("perfbot knows every performance report of this repository. Before writing one: search_reports "
                "for the symptom, draft it in the format (resource perfbot://format), lint_draft until it is "
                "clean, dedup_draft it, and when it overlaps follow the merge plan it returns.")

Text = Annotated[str | None, Field(description="The draft's markdown, front matter included.")]
DraftPath = Annotated[str | None, Field(description="Path of a draft .md file (instead of text).")]
Name = Annotated[str | None, Field(description="The file the draft will be, e.g. devs/issues/perf_my_slug.md; "
                                               "its slug names the merged report.")]
Slug = Annotated[str, Field(description="A report's slug, e.g. perf_fib_dup (a former slug works too).",
                            min_length=1, max_length=200)]


def rules_table() -> str:
    return "\n".join(f"- `{rule.id}` ({rule.severity.value}): {rule.summary}" for rule in RULES)


A = ParamSpec("A")
R = TypeVar("R")


def refusing(tool: Callable[A, R]) -> Callable[A, R]:
    """A tool whose refusal reaches the agent as its tool error (refusals.tool: the kind, the problem, the fix)."""

    @functools.wraps(tool)
    def answered(*args: A.args, **kwargs: A.kwargs) -> R:
        try:
            return tool(*args, **kwargs)
        except UserError as exc:
            raise ToolError(refusals.tool(exc)) from None

    return answered


def build_server(catalog: Catalog, reviewer: Reviewer) -> MCPServer:
    server = MCPServer("perfbot", instructions=INSTRUCTIONS)

    def standing_of(slug: str) -> dict[str, Any]:
        """The record `slug` names (a former slug too) as rendered, or the refusal that says what to do."""
        with catalog.db.session() as session:
            name = next((record.slug for record, _ in find_records(session, slug, catalog.full_name)), None)
        standings = catalog.standings()
        if name is None or name not in standings:
            raise unknown(slug)
        summary = catalog.current()[2].get(name) or {}
        return rendered(standings[name], summary.get("path", f"devs/issues/{name}.md"))

    def unknown(slug: str) -> NotFound:
        _, _, summaries = catalog.current()
        close = difflib.get_close_matches(slug, list(summaries), n=3, cutoff=0.6)
        hint = f"did you mean {', '.join(close)}?" if close else "search_reports lists the records"
        return NotFound(f"no record named {slug!r} in {catalog.full_name}", hint, name=slug)

    @server.tool(annotations=READ_ONLY)
    @refusing
    def search_reports(
        query: Annotated[str, Field(description="Words of the symptom, program or cause; empty: worst first.",
                                    max_length=2000)],
        track: Literal["seq", "par"] | None = None,
        backend: Literal["c", "metal", "cuda"] | None = None,
        limit: Annotated[int, Field(ge=1, le=50)] = 10,
    ) -> dict[str, Any]:
        """Live reports matching the words (title, context and root cause), with the claimed and measured
        figures, the outcome, the fix and the file to read."""
        hits = catalog.search(query, track, backend, limit)
        standings = catalog.standings() if hits else {}
        records = []
        for row, score in hits:
            told = rendered(standings[row["slug"]], row["path"])
            records.append({"slug": row["slug"], "title": row["title"], "path": row["path"], "score": round(score, 3),
                            "claimed": told["claim"], "measured": told["measurement"], "outcome": told["outcome"],
                            "said": told["said"], "fix": told["fix"]})
        answer: dict[str, Any] = {"repo": catalog.full_name, "records": records}
        if not catalog.live:
            answer["note"] = (f"the store holds no live records of {catalog.full_name}: run "
                              "`perfbot sync --repo PATH` first")
        return answer

    @server.tool(annotations=READ_ONLY)
    @refusing
    def show_report(slug: Slug) -> dict[str, Any]:
        """One record's standing: claim, latest measurement, outcome, fix, culprit, and its file."""
        return standing_of(slug)

    @server.tool(annotations=READ_ONLY)
    @refusing
    def lint_draft(text: Text = None, path: DraftPath = None, name: Name = None) -> dict[str, Any]:
        """Every problem `perfbot lint` finds in a draft, each with line, rule, severity, message and remedy."""
        file, data = read_draft(text, path, name)
        return lint_answer(catalog, file, data)

    @server.tool(annotations=READ_ONLY)
    @refusing
    def dedup_draft(text: Text = None, path: DraftPath = None, name: Name = None,
                    k: Annotated[int, Field(ge=1, le=20, description="Candidates to judge.")] = 5) -> dict[str, Any]:
        """Is the draft new? Candidates with verdict, confidence and reasons; when it overlaps, the files the
        merge rule deletes, the file to write, what it must cover, and a merged draft to start from."""
        file, data = read_draft(text, path, name)
        return dedup_answer(catalog, reviewer, file, data, k)

    @server.tool(annotations=READ_ONLY)
    @refusing
    def verification_status(slug: Slug) -> dict[str, Any]:
        """A record's latest bench runs (newest first, with their verdicts) and the runs queued or running."""
        standing = standing_of(slug)
        name = standing["slug"]
        runs = runs_for(catalog.db, name, limit=5, full_name=catalog.full_name)
        waiting = set(unfinished_runs(catalog.db, catalog.full_name, slug=name))
        return {"slug": name, "outcome": standing["outcome"],
                "latest_runs": [measurement(run) for run in runs if run.id not in waiting],
                "queued": [{"run": run.id, "status": str(run.status), "purpose": str(run.purpose), "at": run.at,
                            "progress": run.progress.as_dict()} for run in runs if run.id in waiting],
                "how_to_queue": "a person with write access comments `/perf verify` on the record's issue"}

    @server.resource("perfbot://format", title="The report format", mime_type="text/markdown")
    def report_format() -> str:
        """devs/ISSUE_FORMAT.md: front matter, sections, the delete-and-merge rule, every lint rule."""
        return FORMAT_FILE.read_text(encoding="utf-8")

    @server.resource("perfbot://lint-rules", title="Lint rules", mime_type="text/markdown")
    def lint_rules() -> str:
        """Every lint rule id with its severity and what it means."""
        return rules_table()

    @server.prompt(title="Write a performance report")
    def write_report(symptom: str, track: str = "seq") -> str:
        """Steps and rules for writing one report about `symptom`, checked with perfbot's tools."""
        return (f"Write one performance report (track `{track}`) about: {symptom}\n\n"
                "1. Call search_reports with the symptom's words; read the closest records with show_report.\n"
                "2. Draft devs/issues/perf_<slug>.md in the format of resource perfbot://format: front matter "
                "(track, backend, threads, ratio, fix), # title, Context, Reproduction (the program and its "
                "1-to-1 C translation), Measurements (table with the machine and command), Root cause, Fix.\n"
                "3. Call lint_draft until it returns no problems; every problem names its line and remedy.\n"
                "4. Call dedup_draft. If it overlaps, delete the files in merge.delete and write merge.write "
                "covering merge.must_cover in the same commit; lint again.\n\n"
                f"Lint rules:\n{rules_table()}\n")

    return server
