"""Fixes end to end in local mode: a fix branch named by a report is attached, verified by a queued bench run
on a real C project, and closes its record when it merges with that passing verdict; a non-fix does not."""
from __future__ import annotations

import json
import re

import pytest

from bot.adapters.local_issues import FileIssues
from bot.adapters.store.bench import bench_store, fix_store
from tests.bench_project import NOT_A_FIX, build_project
from tests.flows import local_bot

SLUG = "perf_boxed_sum"


@pytest.fixture
def world(tmp_path, database):
    repo, heads = build_project(tmp_path / "runtime")
    key, queue, tracker, services, worker = local_bot(database, repo.root, tmp_path)
    return repo, heads, key, queue, tracker, services, worker


def issue(tracker: FileIssues, slug: str = SLUG) -> dict:
    issues = json.loads(tracker.state_file.read_text())["issues"]
    return next(i for i in issues.values() if i["body"].startswith(f"<!-- perfbot:record {slug} -->"))


def comment(tracker: FileIssues, kind: str) -> str:
    return next(c["body"] for c in issue(tracker)["comments"] if c["body"].startswith(f"<!-- perfbot:{kind} {SLUG}"))


def test_a_verified_fix_that_merges_closes_its_record_and_moves_the_report(world, database):
    repo, heads, key, queue, tracker, services, worker = world
    services.reports.sync_and_mirror(key, None, None)
    [fix] = fix_store.fixes_for(database, key, SLUG)
    assert (fix.branch, fix.source, fix.head_sha, fix.state) == ("fix/perf_boxed_sum", "report",
                                                                 heads["fix/perf_boxed_sum"], "open")
    assert fix.changed_files == 1 and fix.additions > 0 and fix.token_delta < 0  # the fix unboxes: fewer tokens
    assert [d["id"] for d in queue.listing()] == ["bench-1"]

    assert worker.run_once()
    run = bench_store.get_run(database, 1)
    assert (run.status, run.verdict, run.base, run.head) == ("done", "pass", heads["main"], fix.head_sha)
    assert run.progress.taken >= 5 and run.host
    body = comment(tracker, "bench")
    assert "| base |" in body and "| head |" in body and "```mermaid\nxychart-beta" in body
    assert "### ✅ perfbot verification of `perf_boxed_sum`: fixed" in body and "pass" not in body
    assert re.search(r"\| base \|.*\| reproduced \|", body) and re.search(r"\| head \|.*\| fixed \|", body), body
    assert "outcome: fixed" in issue(tracker)["labels"] and "has fix" in issue(tracker)["labels"]

    services.reports.sync_and_mirror(key, None, None)  # the hourly reconcile: same head, nothing queued again
    assert len(queue.listing()) == 1

    repo.repo.git.merge("--no-ff", "-q", "-m", "Merge the fix", "fix/perf_boxed_sum")
    services.reports.sync_and_mirror(key, None, None)
    closed = issue(tracker)
    assert (closed["state"], closed["state_reason"]) == ("closed", "completed") and "state: fixed" in closed["labels"]
    assert "is fixed" in comment(tracker, "fixed")
    moved = repo.repo.commit("perfbot/fixed-perf_boxed_sum")
    paths = {item.path for item in moved.tree.traverse()}
    assert f"devs/issues/{SLUG}.md" not in paths and f"devs/fixed/{SLUG}.md" in paths
    assert "## Verification" in (moved.tree / f"devs/fixed/{SLUG}.md").data_stream.read().decode()
    assert repo.repo.heads.main.commit.message.startswith("Merge the fix")  # main is never written by the bot

    repo.repo.git.merge("--no-ff", "-q", "-m", "Merge the move", "perfbot/fixed-perf_boxed_sum")
    services.reports.sync_and_mirror(key, None, None)
    assert issue(tracker)["state_reason"] == "completed" and "state: fixed" in issue(tracker)["labels"]


def test_a_merge_without_a_passing_verdict_closes_nothing(world, database):
    repo, heads, key, _queue, tracker, services, worker = world
    repo.repo.git.checkout("-q", "-b", "fix/perf_boxed_sum-attempt", heads["main"])
    repo.write("runtime.c", NOT_A_FIX).commit("runtime: a change that fixes nothing")
    repo.repo.git.checkout("-q", "main")
    repo.repo.git.branch("-q", "-D", "fix/perf_boxed_sum")  # only the attempt is left to verify
    services.reports.sync_and_mirror(key, None, None)
    assert worker.run_once() and not worker.run_once()
    [run] = bench_store.runs_for(database, SLUG)
    assert run.verdict == "fail", run.message
    assert "outcome: no effect" in issue(tracker)["labels"]  # not faster, not fixed: said so, not "not fixed"

    repo.repo.git.merge("--no-ff", "-q", "-m", "Merge the attempt", "fix/perf_boxed_sum-attempt")
    services.reports.sync_and_mirror(key, None, None)
    assert issue(tracker)["state"] == "open"
    assert "stays open" in comment(tracker, "unverified-merge")
    assert "perfbot/fixed-perf_boxed_sum" not in [h.name for h in repo.repo.heads]


def test_verify_on_open_flags_a_claim_that_does_not_reproduce(world, database, tmp_path):
    repo, _heads, key, queue, tracker, services, worker = world
    # The fixed runtime lands on main with the report still claiming 12x: the claim no longer reproduces.
    repo.repo.git.merge("-q", "--no-ff", "-m", "land the runtime fix", "fix/perf_boxed_sum")
    config = (repo.root / ".perfbot.toml").read_text().replace("[verify]\n",
                                                               "[verify]\non_open = true\nfixes = false\n")
    repo.write(".perfbot.toml", config).commit("verify new reports on open")
    services.reports.sync_and_mirror(key, None, None)
    assert [d["event"] for d in queue.listing()] == ["perfbot.verify"]
    assert worker.run_once()
    [run] = bench_store.runs_for(database, SLUG)
    assert (run.purpose, run.verdict, run.base) == ("reproduce", "pass", None)
    labels = issue(tracker)["labels"]
    assert "outcome: not reproduced" in labels and not any(label.startswith("verified:") for label in labels)
    assert "claim not reproduced" in comment(tracker, "reproduce")
    from tests.lead.test_dashboard import make_client  # the dashboard ranks it by what was measured, and says so

    overview = make_client(database, tmp_path).get("/dashboard/").get_data(as_text=True)
    assert re.search(r"<td class=\"num\">[0-9.]+x \[[0-9., ]+\] in [a-z ]+ <span class=\"muted\">language/C</span>",
                     overview)
    # A prose edit is no new claim; a changed C translation is, and is measured again.
    path = f"devs/issues/{SLUG}.md"
    text = (repo.root / path).read_text()
    repo.write(path, text.replace("## Root cause", "Seen again this week.\n\n## Root cause", 1)).commit("prose only")
    services.reports.sync_and_mirror(key, None, None)
    assert len(bench_store.runs_for(database, SLUG)) == 1
    c_block = text.index("```c\n") + len("```c\n")
    repo.write(path, text[:c_block] + "/* the translation, reviewed */\n" + text[c_block:]).commit("new translation")
    services.reports.sync_and_mirror(key, None, None)
    again, first = bench_store.runs_for(database, SLUG)
    assert (again.purpose, again.status) == ("reproduce", "queued")
    assert again.options.claim != first.options.claim


def test_a_bug_while_measuring_ends_the_run_as_an_error_not_running_for_ever(world, database):
    _repo, _heads, key, queue, tracker, services, worker = world

    class Broken:
        name, kind, host, build_timeout = "local", "local", "here", 60

        def exclusive(self):
            raise RuntimeError("the runner fell over")

    services.context.bench.make_runner = lambda conf, path, config: Broken()
    services.reports.sync_and_mirror(key, None, None)
    assert worker.run_once()
    [delivery] = queue.listing()
    run = bench_store.get_run(database, 1)
    assert delivery["status"] == "failed" and "the runner fell over" in delivery["error"]
    assert (run.status, run.verdict) == ("done", "error") and "internal error" in comment(tracker, "bench")
    assert "fell over" not in comment(tracker, "bench")  # what broke stays in the log, not in a comment
