"""Comment commands end to end: GitHub's example `issue_comment` and `pull_request_review_comment` payloads
with command bodies put in, through the handlers, against the GitHub double, for admin, write, read and no
access; every verb, answered in one marked comment per command comment."""
from __future__ import annotations

import re

import pytest

import handlers
from bot.adapters.store.bench import bench_store, fix_store
from bot.adapters.store.reviews.dedup_store import not_duplicates
from bot.core.verify.run_parts import RunResult
from bot.services.worker import Event
from tests.bench_project import build_project
from tests.flows import github_bot, pending_merges
from tests.npm_fixtures import webhook_examples
from tests.reports import canonical_report

REPO, SLUG, OTHER, BRANCH = "team/runtime", "perf_boxed_sum", "perf_sort_allocates", "unbox-accumulator"
ROLES = {"alice": "admin", "wendy": "write", "rita": "read", "nobody": "none"}
ISSUE, OTHER_ISSUE, PULL = 1, 2, 3  # the two reports' issues, then the fix PR


@pytest.fixture
def world(github, database, tmp_path):
    github.add_repo(REPO)
    for login, role in ROLES.items():
        github.set_permission(REPO, login, role)
    remote, heads = build_project(tmp_path / "remotes" / "team" / "runtime.git")
    remote.repo.git.branch(BRANCH, heads["fix/perf_boxed_sum"])
    remote.repo.git.branch("-D", "fix/perf_boxed_sum")
    remote.write(f"devs/issues/{OTHER}.md", canonical_report(OTHER, title="Sorting allocates per comparison"))
    heads["main"] = remote.commit("a second report")
    with github_bot(github, database, tmp_path) as (services, worker, queue):
        services.reports.sync_and_mirror(REPO, None, None)  # issues #1 and #2 mirror the reports
        assert github.add_pull(REPO, head_ref=BRANCH, head_sha=heads["fix/perf_boxed_sum"], base_ref="main",
                               base_sha=heads["main"], body="Unboxes the sum's accumulator.", user="wendy") == PULL
        yield services, worker, queue, heads


def say(github, services, number: int, body: str, user: str, *, review: bool = False, edited_from: str | None = None,
        comment_id: int | None = None, editor: str | None = None):
    """Post a comment as `user` (seeded in the double; an edit by `editor`, by default its author, keeps its id)
    and deliver GitHub's example payload for it; returns its id and perfbot's answer to it."""
    comment_id = comment_id or github.add_comment(REPO, number, body, user=user, review=review)
    event = "pull_request_review_comment" if review else "issue_comment"
    action = "edited" if edited_from is not None else "created"
    payload = next(p for p in webhook_examples(event) if p["action"] == action)
    payload["comment"].update(id=comment_id, body=body)
    payload["comment"]["user"]["login"] = user
    payload["sender"]["login"] = editor or user  # who acted: the comment's author, or whoever edited it
    payload["repository"]["full_name"] = REPO
    if review:
        payload["pull_request"]["number"] = number
    else:
        payload["issue"]["number"] = number
        payload["issue"]["pull_request"] = ({"url": f"{github.url}/repos/{REPO}/pulls/{number}"}
                                            if number == PULL else None)
    if edited_from is not None:
        payload["changes"] = {"body": {"from": edited_from}}
    payload.pop("installation", None)
    delivery = f"d-{comment_id}-{action}"
    assert handlers.dispatch(Event(event, action, delivery, payload, REPO, None), services) == []
    return comment_id, answer(github, comment_id)


def answer(github, comment_id: int) -> str | None:
    with github.state.lock:
        found = [c.body for c in github.state.repo("team", "runtime").comments.values()
                 if c.body.startswith(f"<!-- perfbot:answer {comment_id} -->")]
    assert len(found) <= 1, "one answer per command comment"
    return found[0] if found else None


def reactions(github, comment_id: int, review: bool = False) -> list[str]:
    with github.state.lock:
        repo = github.state.repo("team", "runtime")
        return [r.content for r in (repo.review_comments if review else repo.comments)[comment_id].reactions]


def test_help_and_status_are_open_to_everyone_and_the_comment_gets_eyes(world, github):
    services, *_ = world
    comment_id, text = say(github, services, ISSUE, "What can you do?\n\n/perf help", "nobody")
    assert reactions(github, comment_id) == ["eyes"] and "/perf verify [SLUG...]" in text and "@nobody" in text
    _, text = say(github, services, ISSUE, "/perf status", "rita")
    assert f"`{SLUG}`: open; unmeasured; claimed 12x in wall time, not measured; fixes none" in text


@pytest.mark.parametrize("user", ["rita", "nobody"])
def test_every_state_changing_verb_is_refused_without_write_access(world, github, database, user):
    services, worker, _queue, _ = world
    body = "\n".join([f"/perf verify {SLUG}", f"/perf attach {SLUG}", f"/perf detach {SLUG}",
                      f"/perf dup {OTHER} of {SLUG}", f"/perf not-dup {SLUG} {OTHER}", f"/perf merge {SLUG} {OTHER}",
                      f'/perf close {OTHER} reason="dup"', f"/perf reopen {OTHER}", "/perf digest", "/perf cancel"])
    _, text = say(github, services, PULL, body, user)
    assert text.count("🚫") == 10 and f"@{user} has {ROLES[user]}" in text
    assert not worker.run_once() and fix_store.fixes_for(database, REPO, SLUG) == []
    assert not_duplicates(database, REPO) == set()
    with github.state.lock:
        assert len(github.state.repo("team", "runtime").issues) == 3  # no merge PR was opened


@pytest.mark.parametrize("user", ["alice", "wendy"])
def test_verify_on_a_pr_queues_a_run_whose_answer_follows_it_to_the_verdict(world, github, database, user):
    services, worker, _queue, _heads = world
    comment_id, text = say(github, services, PULL, f"Please measure.\n/perf verify {SLUG} samples=30", user)
    assert "⏳ bench run 1 queued" in text
    [fix] = fix_store.fixes_for(database, REPO, SLUG)
    assert (fix.source, fix.pr_number, fix.attached_by) == ("command", PULL, user)
    assert worker.run_once()
    run = bench_store.get_run(database, 1)
    assert run.status == "done" and run.verdict == "pass", run.message  # decided on steps, however busy
    assert (run.requested_by, run.options.samples) == (user, 30)
    final = answer(github, comment_id)
    assert re.search(r"bench run 1, `perf_boxed_sum`: \*\*fixed\*\* \d+\.\d\dx \[", final), final
    assert "queued" not in final and "**pass**" not in final


def test_attach_detach_cancel_and_an_edit_that_adds_a_command(world, github, database):
    services, worker, _queue, _ = world
    comment_id, text = say(github, services, PULL, f"/perf attach {SLUG}", "wendy")
    assert f"attached `{BRANCH}` as a fix of `{SLUG}`" in text and "tokens" in text
    body = f"/perf attach {SLUG}\n/perf verify\n/perf cancel"
    _, edited = say(github, services, PULL, body, "wendy", edited_from=f"/perf attach {SLUG}", comment_id=comment_id)
    assert edited.count("attached `") == 1 and "bench run 1: cancelled" in edited  # only the two new commands ran
    assert "**cancelled**" in answer(github, comment_id)  # the verify line heard of it too
    assert worker.run_once()  # the cancelled run's job finds it done and measures nothing
    run = bench_store.get_run(database, 1)
    assert (run.verdict, run.result) == ("cancelled", RunResult())
    _, text = say(github, services, PULL, f"/perf detach {SLUG}", "alice")
    assert "detached" in text and fix_store.fixes_for(database, REPO, SLUG)[0].state == "detached"


def test_dup_not_dup_and_merge_go_through_the_dedup_path(world, github, database):
    services, *_ = world
    _, text = say(github, services, ISSUE, f"/perf not-dup {SLUG} {OTHER}", "wendy")
    assert "not duplicates" in text and not_duplicates(database, REPO) == {frozenset({SLUG, OTHER})}
    _, text = say(github, services, ISSUE, f"/perf dup {OTHER} of {SLUG}", "alice")
    assert f"opened #4: `{OTHER}` merged into `{SLUG}`" in text
    with github.state.lock:
        pull = github.state.repo("team", "runtime").issues[4].pull
    assert pull.head_ref == f"perfbot/merge-{SLUG}"
    _, text = say(github, services, ISSUE, f"/perf merge {SLUG} {OTHER}", "alice")
    assert "merged into" in text  # the newer report survives; the same branch's PR is reused or updated


def test_a_merge_pr_is_kept_as_pending_for_the_dashboard_until_github_says_it_closed(world, github, database):
    import copy

    services, *_ = world
    say(github, services, ISSUE, f"/perf dup {OTHER} of {SLUG}", "alice")
    assert pending_merges(database) == [(4, SLUG, OTHER, "alice")]
    payload = copy.deepcopy(next(p for p in webhook_examples("pull_request") if p["action"] == "closed"))
    payload["pull_request"].update(number=4, merged=False)
    payload["pull_request"]["head"]["ref"] = f"perfbot/merge-{SLUG}"
    payload["repository"]["full_name"] = payload["pull_request"]["head"]["repo"]["full_name"] = REPO
    payload.pop("installation", None)
    handlers.dispatch(Event("pull_request", "closed", "merge-closed", payload, REPO, None), services)
    assert pending_merges(database) == []


def test_bisect_queues_a_bisection_of_a_range_and_says_what_is_wrong_with_a_bad_one(world, github, database, tmp_path):
    import git

    from bot.bisect import store as bisect_store

    services, _worker, queue, heads = world
    _, text = say(github, services, ISSUE, f"/perf bisect {SLUG} {heads['main'][:10]}..main", "rita")
    assert "🚫 `bisect` spends bench time" in text and "@rita has read" in text
    _, text = say(github, services, ISSUE, f"/perf bisect {SLUG}", "wendy")
    assert "no passing commit of `perf_boxed_sum` is known" in text and "GOOD..BAD" not in text.split("⚠️")[0]
    _, text = say(github, services, ISSUE, f"/perf bisect {SLUG} {heads['main']}..{heads['fix/perf_boxed_sum']}",
                  "wendy")
    assert "not an ancestor" in text  # the fix branch is not on the default branch's line
    _, text = say(github, services, ISSUE, f"/perf bisect {SLUG} {heads['main'][:10]}..", "alice")
    assert "same commit" in text  # main is that commit: there is nothing between
    _, text = say(github, services, ISSUE, f"/perf bisect perf_nothing {heads['main'][:10]}..main", "alice")
    assert "⚠️ `perf_nothing` is not a report here\n\n**To retry:** `/perf status` lists what this thread knows" in text
    assert bisect_store.unfinished(database, REPO, SLUG) is None

    root = git.Repo(tmp_path / "remotes" / "team" / "runtime.git").commit(heads["main"]).parents[0].hexsha
    _, text = say(github, services, ISSUE, f"/perf bisect {SLUG} {root[:10]}..main", "alice")
    assert "queued bisection 1 of `perf_boxed_sum`" in text
    row = bisect_store.get(database, 1)
    assert (row["good"], row["bad"], row["requested_by"], row["status"]) == (root, heads["main"], "alice", "queued")
    assert [d["id"] for d in queue.listing() if d["event"] == "perfbot.bisect"] == ["bisect-1"]


def test_close_and_reopen_are_logged_overrides(world, github, database):
    services, *_ = world
    _, text = say(github, services, OTHER_ISSUE, f'/perf close {OTHER} reason="measured on a laptop"', "alice")
    assert "closed as a logged override by @alice: measured on a laptop" in text
    with github.state.lock:
        issue = github.state.repo("team", "runtime").issues[OTHER_ISSUE]
        state, labels = issue.state, {label.name for label in issue.labels}
    assert state == "closed" and "state: override" in labels
    _, text = say(github, services, OTHER_ISSUE, f"/perf reopen {OTHER}", "wendy")
    assert "reopened" in text
    with github.state.lock:
        assert github.state.repo("team", "runtime").issues[OTHER_ISSUE].state == "open"


def test_malformed_unknown_and_not_yet_available_commands_say_how_to_retry(world, github):
    services, *_ = world
    _, text = say(github, services, ISSUE, "/perf verify samples=lots\n/perf frobnicate\n/perf digest", "wendy")
    assert "**To retry:** usage: /perf verify [SLUG...] [runner=NAME] [samples=N]" in text
    assert "unknown command 'frobnicate'" in text and "/perf help" in text
    assert ("the weekly digest as it stands now (a preview: nothing was posted)" in text
            and "<!-- perfbot:digest" in text)
    _, none = say(github, services, ISSUE, "```\n/perf verify\n```\n> /perf close x", "wendy")
    assert none is None  # code blocks and quotes hold no commands: no answer, no reaction


def test_a_review_comment_on_the_diff_takes_commands_too(world, github):
    services, *_ = world
    comment_id, text = say(github, services, PULL, "/perf status", "rita", review=True)
    assert reactions(github, comment_id, review=True) == ["eyes"]
    assert "this PR is attached to no report" in text
