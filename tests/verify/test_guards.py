"""Regression guards and bisection end to end on a real C project in git: a verified fix merges, later commits
undo it, the guard measures the default branch again and reopens the record as `regressed`, and the bisection
it starts names the commit that brought the boxing back. Every step goes through the queue and the handlers."""
from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest

from bot.adapters.local_issues import FileIssues
from bot.adapters.store.bench import bench_store, fix_store
from bot.adapters.store.queue import DeliveryQueue, NewDelivery
from bot.bisect import store as bisect_store
from bot.services.worker import Worker
from tests.bench_project import SLOW, build_project
from tests.flows import local_bot

SLUG = "perf_boxed_sum"


@pytest.fixture
def world(tmp_path, database):
    repo, _heads = build_project(tmp_path / "runtime")
    config = (repo.root / ".perfbot.toml").read_text() + "\n[guards]\ndebounce_minutes = 0\n"
    repo.write(".perfbot.toml", config).commit("guards measure at once")
    key, queue, tracker, services, worker = local_bot(database, repo.root, tmp_path, lease_seconds=600)
    return repo, key, queue, tracker, services, worker


def push(queue: DeliveryQueue, repo, key: str) -> str:
    """What local mode's poller queues for a new head of the default branch."""
    head = repo.repo.head.commit.hexsha
    payload = {"ref": "refs/heads/main", "after": head, "local": True,
               "repository": {"full_name": key, "default_branch": "main"}}
    queue.enqueue(NewDelivery(f"local-{head}", "push", None, key, None, json.dumps(payload)))
    return head


def drain(worker: Worker) -> int:
    done = 0
    while worker.run_once():
        done += 1
    return done


def issue(tracker: FileIssues) -> dict:
    issues = json.loads(tracker.state_file.read_text())["issues"]
    return next(i for i in issues.values() if i["body"].startswith(f"<!-- perfbot:record {SLUG} -->"))


def comments(tracker: FileIssues, kind: str) -> list[str]:
    return [c["body"] for c in issue(tracker)["comments"] if c["body"].startswith(f"<!-- perfbot:{kind} {SLUG}")]


def fixed_world(world):
    """The fix verified, merged and its record closed as fixed; the guard measured the merge and held."""
    repo, key, queue, tracker, services, worker = world
    push(queue, repo, key)
    drain(worker)
    assert bench_store.get_run(services.context.db, 1).verdict == "pass"
    repo.repo.git.merge("--no-ff", "-q", "-m", "Merge the fix", "fix/perf_boxed_sum")
    merged = push(queue, repo, key)
    drain(worker)
    assert fix_store.record_standing(services.context.db, key, SLUG)[0] == "fixed"
    [guard] = [r for r in bench_store.runs_for(services.context.db, SLUG, full_name=key) if r.purpose == "guard"]
    assert (guard.head, guard.verdict) == (merged, "pass"), guard.message
    assert comments(tracker, "guard") == []  # a guard that holds writes nothing on the closed issue
    return merged


def test_a_regression_after_a_verified_fix_reopens_the_record_and_bisection_names_the_commit(world, database):
    repo, key, queue, tracker, _services, worker = world
    merged = fixed_world(world)

    repo.write("NOTES.md", "benchmarks live in bench/\n").commit("docs: where the benchmarks live")
    culprit = repo.write("runtime.c", SLOW).commit("runtime: simplify value handling")  # boxes every value again
    repo.write("CHANGES.md", "- simpler values\n").commit("changelog")
    head = push(queue, repo, key)
    drain(worker)

    assert fix_store.record_standing(database, key, SLUG)[0] == "regressed"
    reopened = issue(tracker)
    assert reopened["state"] == "open" and "state: regressed" in reopened["labels"]
    [guard_comment] = comments(tracker, "guard")
    assert "guard failed" in guard_comment and head[:12] in guard_comment

    [row] = [bisect_store.get(database, 1)]
    assert (row["status"], row["outcome"], row["good"], row["bad"]) == ("done", "found", merged, head)
    assert row["culprit"] == culprit, row["message"]
    assert all(step["mark"] in ("good", "bad") for step in row["steps"]) and len(row["steps"]) == 2
    [bisect_comment] = comments(tracker, "bisect")
    assert f"`{culprit}`" in bisect_comment and "runtime: simplify value handling" in bisect_comment
    assert bisect_comment.count("| ❌ bad") + bisect_comment.count("| ✅ good") == 2  # both steps, measured

    drain(worker)  # nothing left: the bisection is done, and the head is guarded already
    assert bisect_store.get(database, 2) is None


def test_a_burst_of_pushes_is_guarded_once_at_the_head_it_settles_on(world, database):
    repo, key, queue, _tracker, services, worker = world
    fixed_world(world)
    config = (repo.root / ".perfbot.toml").read_text().replace("debounce_minutes = 0", "debounce_minutes = 15")
    repo.write(".perfbot.toml", config).commit("guards wait for pushes to pause")
    first = repo.repo.head.commit.hexsha
    services.guards.after_push(key, first, None)
    second = repo.write("NOTES.md", "more\n").commit("docs")
    services.guards.after_push(key, second, None)
    waiting = {d["id"]: d for d in queue.listing(("pending",)) if d["event"] == "perfbot.guards"}
    assert len(waiting) == 2
    due = [datetime.fromisoformat(d["next_attempt_at"]) for d in waiting.values()]
    assert all(timedelta(minutes=14) < when.replace(tzinfo=UTC) - datetime.now(UTC)
               <= timedelta(minutes=15) for when in due)
    assert not worker.run_once()  # nothing is due before the pause

    assert services.guards.check(key, first, None) == []  # the default branch moved on: the later check measures
    [run_id] = services.guards.check(key, second, None)
    assert bench_store.get_run(database, run_id).head == second
    assert services.guards.check(key, second, None) == []  # that head is guarded already
    pruned = repo.delete(f"devs/issues/{SLUG}.md").commit("prune the fixed report")
    assert services.guards.check(key, pruned, None) == []  # no report left anywhere: the guard is retired


def test_a_scheduled_guard_check_is_queued_once_per_due_time(world, database):
    repo, key, queue, _tracker, services, _worker = world
    fixed_world(world)
    config = (repo.root / ".perfbot.toml").read_text().replace("debounce_minutes = 0",
                                                                'after_push = false\nschedule = "daily 03:00"')
    repo.write(".perfbot.toml", config).commit("guards at night only")
    assert services.guards.after_push(key, repo.repo.head.commit.hexsha, None) is None
    night = datetime(2026, 12, 3, 3, 10, tzinfo=UTC)
    first = services.guards.schedule(night)
    assert list(first) == [key] and first[key].endswith("-at-202612030300")
    again = services.guards.schedule(night + timedelta(minutes=15))
    assert again == first
    assert [d["id"] for d in queue.listing()].count(first[key]) == 1  # the same id: stored once


def test_bisect_refuses_a_range_that_is_not_older_to_newer(world, database):
    from bot.errors import UserError

    repo, key, _queue, _tracker, services, _worker = world
    merged = fixed_world(world)
    newer = repo.write("NOTES.md", "x\n").commit("docs")
    with pytest.raises(UserError, match="not an ancestor"):
        services.guards.request_bisection(key, SLUG, newer, merged, "lead", None)
    with pytest.raises(UserError, match="does not name a commit"):
        services.guards.request_bisection(key, SLUG, "no-such-branch", None, "lead", None)
    with pytest.raises(UserError, match="not a report here"):
        services.guards.request_bisection(key, "perf_nothing", None, None, "lead", None)
    bisect_id = services.guards.request_bisection(key, SLUG, None, None, "lead", None)  # last guard pass .. the head
    row = bisect_store.get(database, bisect_id)
    assert (row["good"], row["bad"], row["requested_by"]) == (merged, newer, "lead")
    with pytest.raises(UserError, match="still going"):
        services.guards.request_bisection(key, SLUG, None, None, "lead", None)


def test_perfbot_bisect_measures_the_ends_and_the_middle_and_names_the_commit(tmp_path, monkeypatch):
    from click.testing import CliRunner

    from bot.cli import main
    from tests.bench_project import FAST

    monkeypatch.setenv("PERFBOT_INSTANCE_DIR", str(tmp_path / "instance"))
    repo, _ = build_project(tmp_path / "runtime")
    good = repo.write("runtime.c", FAST).commit("runtime: unboxed values")
    repo.write("NOTES.md", "a note\n").commit("docs")
    culprit = repo.write("runtime.c", SLOW).commit("runtime: box again")
    repo.write("CHANGES.md", "- boxes\n").commit("changelog")
    cli = CliRunner()
    result = cli.invoke(main, ["bisect", SLUG, good[:10], "--repo", str(repo.root)])
    assert result.exit_code == 0, result.output
    lines = result.output.strip().splitlines()
    assert lines[-1] == f"culprit {culprit}" and lines[-2].startswith("found: introduced by")
    measured = [line.split()[:2] for line in lines[:-2]]
    assert measured[:2] == [[repo.repo.head.commit.hexsha[:12], "bad"], [good[:12], "good"]]  # the ends first
    assert [culprit[:12], "bad"] in measured and len(measured) == 4
    assert cli.invoke(main, ["bisect", SLUG, "--upload-pack=touch x", "--repo", str(repo.root)]).exit_code == 2
    hostile = cli.invoke(main, ["bisect", SLUG, "--repo", str(repo.root), "--", "--upload-pack=touch x"])
    assert hostile.exit_code == 1 and "not a valid ref" in hostile.output and not (repo.root / "x").exists()


def test_perfbot_bisect_tries_a_configuration_before_it_is_committed(tmp_path, monkeypatch):
    from click.testing import CliRunner

    from bot.cli import main
    from tests.bench_project import FAST

    monkeypatch.setenv("PERFBOT_INSTANCE_DIR", str(tmp_path / "instance"))
    repo, _ = build_project(tmp_path / "runtime")
    good = repo.write("runtime.c", FAST).commit("runtime: unboxed values")
    for n in range(3):
        repo.write("NOTES.md", f"note {n}\n").commit(f"docs {n}")
    committed = (repo.root / ".perfbot.toml").read_text()
    narrow = tmp_path / "narrow.toml"
    narrow.write_text(committed + "\n[guards]\nmax_bisect_commits = 2\n")
    cli = CliRunner()
    refused = cli.invoke(main, ["bisect", SLUG, good[:10], "--repo", str(repo.root), "--config", str(narrow)])
    # the file's limit, not the committed one, and nothing was measured
    assert refused.exit_code == 1 and "more than [guards] max_bisect_commits = 2" in refused.output, refused.output
    assert f"configuration: {narrow}" in refused.output
    broken = tmp_path / "broken.toml"
    broken.write_text(committed.replace("[verify]", "[verify]\nmax_sample = 3"))
    failed = cli.invoke(main, ["bisect", SLUG, good[:10], "--repo", str(repo.root), "--config", str(broken)])
    assert failed.exit_code == 1 and f"{broken}:" in failed.output and "max_sample" in failed.output, failed.output
    missing = cli.invoke(main, ["bisect", SLUG, good[:10], "--repo", str(repo.root), "--config", str(tmp_path / "no")])
    assert missing.exit_code == 2 and "does not exist" in missing.output
