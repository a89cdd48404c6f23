"""`perfbot mcp` driven as an agent drives it: the SDK's own client, over stdio, against the demo repository."""
from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path

import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from bot.adapters.git import GitRepository
from bot.adapters.store.bench.bench_store import finish_run, queue_run
from bot.adapters.store.engine import Database
from bot.core.verify.interval import Interval
from bot.core.verify.run_parts import RunResult, SideResult
from bot.demo.create import create_demo
from bot.services.reports.sync import sync

ROOT = Path(__file__).resolve().parents[2]
TOOLS = {"search_reports", "show_report", "lint_draft", "dedup_draft", "verification_status"}
NEW_DRAFT = """---
track: seq
backend: c
threads: 1
ratio: 4.2
fix: unknown
---
# Hash map probes walk a linked list per bucket

## Context

A word-frequency program spends its time in bucket walks on the interpreter's hash map.

## Reproduction

```bend
def main():
  return count_words(corpus(20000))
```

```c
int main(void) { return count_words(corpus(20000)); }
```

## Measurements

| implementation | time | machine | command |
| --- | --- | --- | --- |
| bend | 4.2 s | box-1 | bend run-c words.bend |
| c | 1.0 s | box-1 | ./words |

## Root cause

Each probe in `map_probe` follows `next` pointers through cold nodes; the load factor is never checked.

## Fix

Unknown.
"""


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    """The demo repository synced into a fresh store, with one finished and one queued bench run."""
    folder = tmp_path_factory.mktemp("mcp")
    create_demo(folder / "demo")
    url = f"sqlite:///{folder / 'perfbot.sqlite3'}"
    db = Database(url)
    repo = GitRepository(folder / "demo")
    sync(db, repo)
    done = queue_run(db, repo.full_name, "perf_boxed_sum", base=None, head="a" * 40, purpose="reproduce")
    finish_run(db, done, "fail", "reproduced: 60x slower than C", RunResult((SideResult(
        "head", "a" * 40, (0.601,) * 5, (0.01,) * 5, interval=Interval(58.0, 60.1, 62.0), decision="fail"),),
        verdict="fail"))
    queued = queue_run(db, repo.full_name, "perf_boxed_sum", base=None, head="b" * 40, purpose="fix")
    repo.close()
    db.dispose()
    return {"repo": folder / "demo", "url": url, "queued": queued, "finished": done, "folder": folder}


def server(demo, *, use_env: bool = False) -> StdioServerParameters:
    """`perfbot mcp` as an agent's configuration starts it; the store named by --db or by the environment."""
    args = ["-c", "from bot.cli import main; main()", "mcp", "--repo", str(demo["repo"])]
    env = {"PERFBOT_INSTANCE_DIR": str(demo["folder"] / "instance"), "PYTHONPATH": str(ROOT)}
    if use_env:
        env["PERFBOT_DATABASE_URL"] = demo["url"]
    else:
        args += ["--db", demo["url"]]
    return StdioServerParameters(command=sys.executable, args=args, env=env, cwd=str(demo["folder"]))


def run(scenario, demo, **kwargs):
    async def go():
        async with Client(server(demo, **kwargs), read_timeout_seconds=120) as client:
            return await scenario(client)
    return asyncio.run(go())


def answer(result) -> dict:
    assert not result.is_error, result.content
    return result.structured_content


def error_text(result) -> str:
    assert result.is_error, result.structured_content
    return " ".join(block.text for block in result.content)


def test_lists_the_five_tools_with_typed_schemas_all_read_only(demo):
    async def scenario(client):
        return (await client.list_tools()).tools

    tools = {tool.name: tool for tool in run(scenario, demo)}
    assert set(tools) == TOOLS
    assert tools["search_reports"].input_schema["required"] == ["query"]
    assert tools["search_reports"].input_schema["properties"]["track"]["anyOf"][0]["enum"] == ["seq", "par"]
    assert tools["show_report"].input_schema["required"] == ["slug"]
    assert all(tool.annotations.read_only_hint and not tool.annotations.destructive_hint for tool in tools.values())


def test_each_tool_answers_on_the_demo(demo):
    draft = (demo["repo"] / "devs" / "issues" / "perf_boxed_sum.md").read_text()

    async def scenario(client):
        return {
            "search": answer(await client.call_tool("search_reports", {"query": "sum boxes every step"})),
            "filtered": answer(await client.call_tool("search_reports", {"query": "sum", "track": "par"})),
            "show": answer(await client.call_tool("show_report", {"slug": "perf_boxed_sum"})),
            "lint": answer(await client.call_tool("lint_draft", {"text": draft.replace("## Root cause", "## Notes"),
                                                                 "name": "devs/issues/perf_boxed_again.md"})),
            "dup": answer(await client.call_tool("dedup_draft", {"text": draft,
                                                                 "name": "devs/issues/perf_boxed_again.md"})),
            "new": answer(await client.call_tool("dedup_draft", {"text": NEW_DRAFT})),
            "status": answer(await client.call_tool("verification_status", {"slug": "perf_boxed_sum"})),
            "format": (await client.read_resource("perfbot://format")).contents[0].text,
            "prompt": (await client.get_prompt("write_report", {"symptom": "a slow sum"})).messages[0].content.text,
        }

    got = run(scenario, demo)
    top = got["search"]["records"][0]
    assert top["slug"] == "perf_boxed_sum" and top["path"] == "devs/issues/perf_boxed_sum.md"
    assert top["claimed"]["figure"] == pytest.approx(63.6) and top["fix"]["ref"] == "fix/perf_boxed_sum-unbox"
    assert top["measured"]["point"] == 60.1 and top["outcome"] == "accurate"
    assert top["said"].startswith("accurate: measured 60.1x")
    assert got["filtered"]["records"] == []  # the demo's reports are all seq
    show = got["show"]
    assert show["claim"]["track"] == "seq" and show["measurement"]["run"] == demo["finished"]
    assert show["path"] == "devs/issues/perf_boxed_sum.md" and show["fix"]["ref"] == "fix/perf_boxed_sum-unbox"
    rules = {p["rule"]: p for p in got["lint"]["problems"]}
    missing = rules["root-cause-missing"]
    assert missing["remedy"] and missing["line"] and missing["severity"] == "error"
    assert got["lint"]["errors"] >= 1 and not got["lint"]["clean"]
    dup = got["dup"]
    assert dup["overlaps"] and dup["candidates"][0]["slug"] == "perf_boxed_sum"
    assert dup["candidates"][0]["verdict"] == "duplicate" and dup["candidates"][0]["reasons"]
    assert dup["merge"]["delete"] == ["devs/issues/perf_boxed_sum.md"]
    assert dup["merge"]["write"] == "devs/issues/perf_boxed_again.md"
    assert "supersedes: [perf_boxed_sum]" in dup["merge"]["merged_report"]
    assert any("reproduction" in item for item in dup["merge"]["must_cover"])
    assert not got["new"]["overlaps"] and "merge" not in got["new"]
    status = got["status"]
    assert [q["run"] for q in status["queued"]] == [demo["queued"]]
    assert [r["run"] for r in status["latest_runs"]] == [demo["finished"]]
    assert "## Delete and merge" in got["format"]
    assert "too-long" in got["prompt"] and "lint_draft" in got["prompt"]


def test_the_format_resource_is_the_user_facing_spec_as_package_data():
    """An installed perfbot has no devs/ folder: it serves its packaged copy, which must be the spec itself."""
    from bot.mcp.server import FORMAT_FILE

    spec = (ROOT / "devs" / "ISSUE_FORMAT.md").read_text(encoding="utf-8")
    assert FORMAT_FILE.read_text(encoding="utf-8") == spec, (
        "bot/mcp/ISSUE_FORMAT.md (what `perfbot mcp` serves) differs from devs/ISSUE_FORMAT.md, the spec people "
        "edit: run `cp devs/ISSUE_FORMAT.md bot/mcp/ISSUE_FORMAT.md`")


def test_bad_input_is_a_clear_tool_error_and_the_server_keeps_serving(demo, tmp_path):
    big = tmp_path / "perf_big.md"
    big.write_text("word " * 2_100_000)

    async def scenario(client):
        said = {
            "unknown": await client.call_tool("show_report", {"slug": "perf_boxed_summ"}),
            "unknown_status": await client.call_tool("verification_status", {"slug": "perf_nothing_like_it"}),
            "empty": await client.call_tool("lint_draft", {"text": "   \n"}),
            "empty_dedup": await client.call_tool("dedup_draft", {"text": ""}),
            "huge": await client.call_tool("dedup_draft", {"text": "x" * 10 * 2**20}),
            "huge_file": await client.call_tool("lint_draft", {"path": str(big)}),
            "neither": await client.call_tool("lint_draft", {}),
            "not_md": await client.call_tool("lint_draft", {"path": str(tmp_path)}),
            "bad_track": await client.call_tool("search_reports", {"query": "x", "track": "gpu"}),
        }
        said["after"] = await client.call_tool("show_report", {"slug": "perf_boxed_sum"})
        return said

    said = run(scenario, demo)
    assert "not found: no record named 'perf_boxed_summ'" in error_text(said["unknown"])  # refusals.tool: kind first
    assert "did you mean perf_boxed_sum" in error_text(said["unknown"])
    assert "search_reports lists the records" in error_text(said["unknown_status"])
    assert "the draft is empty" in error_text(said["empty"]) and "the draft is empty" in error_text(said["empty_dedup"])
    assert "10485760 bytes, over the" in error_text(said["huge"])
    assert "over the" in error_text(said["huge_file"]) and str(big) in error_text(said["huge_file"])
    assert "exactly one of `text`" in error_text(said["neither"])
    assert "invalid: the draft is empty\nfix: send the report's markdown" in error_text(said["empty"])
    assert "not a .md file" in error_text(said["not_md"])
    assert error_text(said["bad_track"])
    assert answer(said["after"])["slug"] == "perf_boxed_sum"


def test_the_store_comes_from_the_environment_and_no_call_writes_work(demo):
    """Every tool, called with the store named only by PERFBOT_DATABASE_URL: no bench run is queued, no delivery
    stored, no branch made."""
    db = Database(demo["url"])
    tables = ("bench_runs", "deliveries", "records", "revisions", "llm_answers", "fixes", "pending_merges")

    def counts() -> dict:
        with db.engine.connect() as connection:
            return {t: connection.exec_driver_sql(f"select count(*) from {t}").scalar() for t in tables}

    before = counts()
    branches = sorted(os.listdir(demo["repo"] / ".git" / "refs" / "heads"))
    draft = (demo["repo"] / "devs" / "issues" / "perf_mod_shift_subtract.md").read_text()

    async def scenario(client):
        out = [await client.call_tool("search_reports", {"query": "shift subtract"}),
               await client.call_tool("dedup_draft", {"text": draft, "name": "devs/issues/perf_mod_again.md"}),
               await client.call_tool("lint_draft", {"text": draft}),
               await client.call_tool("verification_status", {"slug": "perf_mod_shift_subtract"})]
        return [answer(result) for result in out]

    search, dedup, _, _ = run(scenario, demo, use_env=True)
    assert search["records"][0]["slug"] == "perf_mod_shift_subtract"
    assert dedup["overlaps"]
    assert counts() == before
    assert sorted(os.listdir(demo["repo"] / ".git" / "refs" / "heads")) == branches
    db.dispose()
    json.dumps(dedup)  # every answer is plain JSON


def test_an_empty_store_is_said_and_a_folder_without_git_is_refused(tmp_path):
    """Before any sync the tools answer and say why they found nothing; outside a repository the command stops
    with a message, not a traceback."""
    from click.testing import CliRunner

    from bot.cli import main

    create_demo(tmp_path / "demo")
    empty = {"repo": tmp_path / "demo", "url": f"sqlite:///{tmp_path / 'empty.sqlite3'}", "folder": tmp_path}

    async def scenario(client):
        return (answer(await client.call_tool("search_reports", {"query": "sum"})),
                answer(await client.call_tool("dedup_draft", {"text": NEW_DRAFT})))

    search, dedup = run(scenario, empty)
    assert search["records"] == [] and "perfbot sync" in search["note"]
    assert dedup["compared_with"] == 0 and "perfbot sync" in dedup["note"] and not dedup["overlaps"]
    (tmp_path / "plain").mkdir()
    result = CliRunner().invoke(main, ["mcp", "--repo", str(tmp_path / "plain"), "--db", empty["url"]])
    assert result.exit_code == 1 and "Error:" in result.output and "Traceback" not in result.output


def test_the_catalogs_standings_follow_a_state_a_person_set(tmp_path):
    """The MCP catalog keeps standings between calls; a record a person closed (no content changed, no run)
    must not be served as it stood before."""
    from sqlalchemy import update

    from bot.adapters.store.models import Record
    from bot.mcp.catalog import Catalog

    create_demo(tmp_path / "demo")
    db = Database(f"sqlite:///{tmp_path / 'perfbot.sqlite3'}")
    repo = GitRepository(tmp_path / "demo")
    sync(db, repo)
    repo.close()
    catalog = Catalog.open(db, tmp_path / "demo")
    assert catalog.standings()["perf_boxed_sum"].state == "open"
    with db.session() as session:
        session.execute(update(Record).where(Record.slug == "perf_boxed_sum").values(state="closed"))
        session.commit()
    assert catalog.standings()["perf_boxed_sum"].state == "closed"
    db.dispose()
