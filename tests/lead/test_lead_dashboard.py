"""The lead's view end to end against the GitHub double: the campaign dashboard issue drawn, kept current
with no write when nothing changed, found again after a lost database; its boxes ticked by writers (carried
out) and by readers (refused, unticked); notices told exactly once across restarts."""
from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import delete

import handlers
from bot.adapters.store.bench import bench_store
from bot.adapters.store.lead import notice_store
from bot.adapters.store.service_models import DashboardIssue, Notice
from bot.core.lead.dashboard import MARKER
from bot.core.verify.interval import Interval
from bot.core.verify.run_parts import RunResult, SideResult
from bot.services.worker import Event
from tests.bench_project import CONFIG, build_project
from tests.flows import github_bot, pending_merges
from tests.npm_fixtures import webhook_examples
from tests.reports import canonical_report

REPO, SLUG, STUCK = "team/runtime", "perf_boxed_sum", "perf_sort_allocates"
ROLES = {"alice": "admin", "wendy": "write", "rita": "read"}
NOTIFY = """
[notify]
people = ["lead", "@ana"]
stuck_days = 3

[[milestones]]
name = "every seq report at or under 20x"
kind = "seq-near-c"
threshold = 20.0
"""


@pytest.fixture
def world(github, database, tmp_path):
    github.add_repo(REPO)
    for login, role in ROLES.items():
        github.set_permission(REPO, login, role)
    remote, heads = build_project(tmp_path / "remotes" / "team" / "runtime.git")
    remote.write(".perfbot.toml", CONFIG + NOTIFY)
    remote.write(f"devs/issues/{STUCK}.md", canonical_report(STUCK, title="Sorting allocates per comparison",
                                                               root_cause="Unknown yet."))
    heads["main"] = remote.commit("the lead's view, and a report nobody has explained")
    with github_bot(github, database, tmp_path) as (services, worker, queue):
        services.reports.sync_and_mirror(REPO, None, None)  # issues #1 and #2 mirror the reports
        yield services, worker, queue, remote


def dashboards(github) -> list:
    with github.state.lock:
        return [i for i in github.state.repo("team", "runtime").issues.values() if (i.body or "").startswith(MARKER)]


def comments(github, prefix: str) -> list[str]:
    with github.state.lock:
        return [c.body for c in github.state.repo("team", "runtime").comments.values() if c.body.startswith(prefix)]


def fresh_process(github, database, tmp_path):
    """A restarted perfbot on the same store and double: nothing carried over in memory."""
    return github_bot(github, database, tmp_path)


def tick(github, services, number: int, slug: str, verb: str, user: str) -> list:
    """A person ticks a box in the issue (the double keeps the new body) and GitHub sends `issues` edited."""
    with github.state.lock:
        issue = github.state.repo("team", "runtime").issues[number]
        before = issue.body
        box = f"- [ ] <!-- perfbot:action {verb} {slug} -->"
        assert box in before, f"no {verb} box for {slug}"
        issue.body = before.replace(box, box.replace("[ ]", "[x]"), 1)
        after = issue.body
    payload = next(p for p in webhook_examples("issues") if p["action"] == "edited")
    payload["issue"].update(number=number, body=after)
    payload["sender"]["login"] = user
    payload["repository"]["full_name"] = REPO
    payload["changes"] = {"body": {"from": before}}
    payload.pop("installation", None)
    return handlers.dispatch(Event("issues", "edited", f"edit-{user}-{verb}", payload, REPO, None), services)


def test_the_dashboard_lists_reports_by_ratio_milestones_and_what_needs_a_decision(world, github, database):
    services, *_ = world
    assert services.lead.refresh_dashboard(REPO) == "created"
    [issue] = dashboards(github)
    body = issue.body
    assert issue.number == 3 and issue.title == "perfbot campaign dashboard"
    assert {label.name for label in issue.labels} == {"perfbot", "perfbot-dashboard"}
    assert "### seq / c (2)" in body
    # Worst measured figure first, each with its issue; nothing measured yet, so neither is ranked by its claim.
    # The one whose fix is being measured has no box meanwhile.
    in_flight = body.index(f"- ⏳ **not ranked** `{SLUG}` #1: Every step of a sum boxes its value (unmeasured; "
                           "claimed 12x in wall time, not measured; a run is in flight)")
    assert in_flight < body.index(f"- [ ] <!-- perfbot:action verify {STUCK} --> **not ranked** `{STUCK}` #2: Sorting")
    [run] = bench_store.runs_for(database, SLUG, full_name=REPO)  # the sync queued the fix branch's verification
    assert f"## Verifications in flight (1)\n\n- bench run {run.id}: `{SLUG}` fix, queued" in body
    assert "## Fixes waiting for a verdict (1)\n\n- `perf_boxed_sum`: `fix/perf_boxed_sum`" in body
    assert "| every seq report at or under 20x ✅ | 2/2 (100%) |" in body
    assert "Milestone reached: **every seq report at or under 20x**: 2/2 done" in body
    decisions = body.split("## Needs your decision (1)\n\n", 1)[1].split("\n\n", 1)[0]
    assert decisions.startswith(f"- **Report stuck without a root cause**: `{STUCK}`: open ")


def test_nothing_changed_means_no_write_and_a_lost_database_finds_the_issue_again(world, github, database, tmp_path):
    services, *_ = world
    services.lead.refresh_dashboard(REPO)
    github.clear_requests()
    with fresh_process(github, database, tmp_path) as (again, _worker, _queue):
        assert again.lead.refresh_dashboard(REPO) == "unchanged"
        assert github.writes() == []
        with database.session() as session:  # the store lost the dashboard's row and every notice
            session.execute(delete(DashboardIssue))
            session.execute(delete(Notice))
        assert again.lead.refresh_dashboard(REPO) == "updated"
        assert len(dashboards(github)) == 1 and dashboards(github)[0].number == 3
        assert not [w for w in github.writes() if w.method == "POST" and w.path.endswith("/issues")]
        assert len(comments(github, "<!-- perfbot:notice milestone-met ")) == 1  # found by its marker, not reposted
        github.clear_requests()
        assert again.lead.refresh_dashboard(REPO) == "unchanged" and github.writes() == []


def test_a_writer_ticking_verify_now_queues_the_run_and_the_box_is_redrawn(world, github, database):
    services, *_ = world
    services.lead.refresh_dashboard(REPO)
    assert tick(github, services, 3, STUCK, "verify", "wendy") == []
    [run] = bench_store.runs_for(database, STUCK, full_name=REPO)
    assert run.status == "queued" and run.requested_by == "wendy" and run.purpose == "reproduce"
    [answer] = comments(github, "<!-- perfbot:dashboard-answer -->")
    assert f"**verify now** `{STUCK}` (ticked by @wendy): ⏳ bench run {run.id} queued" in answer
    body = dashboards(github)[0].body
    assert "[x]" not in body and f"<!-- perfbot:action verify {STUCK} -->" not in body
    assert f"- bench run {run.id}: `{STUCK}` reproduce, queued" in body


def test_a_readers_tick_is_refused_explained_and_unticked(world, github, database):
    services, *_ = world
    services.lead.refresh_dashboard(REPO)
    assert tick(github, services, 3, STUCK, "verify", "rita") == []
    assert bench_store.runs_for(database, STUCK, full_name=REPO) == []
    [answer] = comments(github, "<!-- perfbot:dashboard-answer -->")
    assert "only people with write access act from this dashboard; @rita has read" in answer
    body = dashboards(github)[0].body
    assert "[x]" not in body and f"- [ ] <!-- perfbot:action verify {STUCK} -->" in body


def test_closing_as_not_reproduced_from_the_dashboard_is_the_commands_override(world, github, database):
    services, *_ = world
    # The claim measured on the default branch: no gap, so it did not reproduce.
    run_id = bench_store.queue_run(database, REPO, STUCK, base=None, head="a" * 40, purpose="reproduce")
    bench_store.finish_run(database, run_id, "pass", "no gap", RunResult((SideResult(
        "head", "a" * 40, (0.55,) * 5, (0.5,) * 5, interval=Interval(1.05, 1.1, 1.15)),), verdict="pass"))
    services.lead.refresh_dashboard(REPO)
    assert "close as not reproduced" in dashboards(github)[0].body
    assert tick(github, services, 3, STUCK, "close", "alice") == []
    [answer] = comments(github, "<!-- perfbot:dashboard-answer -->")
    assert f"`{STUCK}` closed as a logged override by @alice: not reproduced" in answer
    with github.state.lock:
        assert github.state.repo("team", "runtime").issues[2].state == "closed"
    assert f"`{STUCK}`" not in dashboards(github)[0].body


def test_notices_are_told_once_with_mentions_across_restarts(world, github, database, tmp_path):
    services, *_ = world
    later = datetime.now(UTC) + timedelta(days=4)
    services.lead.refresh_dashboard(REPO, now=later)
    [stuck] = comments(github, f"<!-- perfbot:notice stuck-no-root-cause {STUCK} -->")
    assert stuck.splitlines()[1].startswith("@lead @ana: 🚧 **Report stuck without a root cause**")
    body = dashboards(github)[0].body
    assert f"**Report stuck without a root cause**: `{STUCK}`: open " in body
    for _ in range(2):
        with fresh_process(github, database, tmp_path) as (again, _worker, _queue):
            github.clear_requests()
            assert again.lead.refresh_dashboard(REPO, now=later) == "unchanged" and github.writes() == []
    # The milestone, the stuck report, and the fix's bench run that no host has taken for four days: once each.
    assert len(comments(github, "<!-- perfbot:notice ")) == 3
    [host] = comments(github, "<!-- perfbot:notice host-unreachable local -->")
    assert "🚧 **Bench host unreachable**" in host and "runner `local`: bench run 1 has waited 96." in host
    kinds = {n["kind"]: n for n in notice_store.notices_of(database, REPO)}
    assert set(kinds) == {"milestone-met", "stuck-no-root-cause", "host-unreachable"}
    assert not kinds["stuck-no-root-cause"]["resolved"]
    # Resolved when its condition stops holding: the report is closed, so it leaves "Needs your decision".
    services.reports.override(REPO, STUCK, True, "alice", "d-1", "explained elsewhere")
    services.lead.refresh_dashboard(REPO, now=later)
    assert "Report stuck" not in dashboards(github)[0].body
    assert {n["kind"]: n["resolved"] for n in notice_store.notices_of(database, REPO)}["stuck-no-root-cause"]


def test_local_mode_keeps_the_dashboard_as_a_file(tmp_path, database):
    from bot.adapters.git import local_full_name
    from bot.adapters.local_issues import FileIssues
    from bot.services.usecases import BotServices, RepoSource
    from tests.gitrepo import RepoBuilder

    repo = RepoBuilder(tmp_path / "runtime")
    repo.write(".perfbot.toml", NOTIFY).write(f"devs/issues/{STUCK}.md", canonical_report(STUCK, root_cause="TBD"))
    repo.commit("a report")
    key, tracker = local_full_name(repo.root), FileIssues(tmp_path / "issues")

    def process() -> BotServices:
        return BotServices(database, lambda _n, _i: tracker, RepoSource(local={key: repo.root}), bot_login="perfbot")

    process().reports.sync_and_mirror(key, None, None)
    assert process().lead.refresh_dashboard(key) == "created"
    text = (tmp_path / "issues" / "dashboard.md").read_text()
    assert text.startswith("# #2 perfbot campaign dashboard") and f"<!-- perfbot:action verify {STUCK} -->" in text
    assert f"<!-- perfbot:notice stuck-no-root-cause {STUCK} -->\n@lead @ana: 🚧" in text  # the notice, on the issue
    before = tracker.state_file.read_bytes()
    assert process().lead.refresh_dashboard(key) == "unchanged" and tracker.state_file.read_bytes() == before


def test_a_closed_dashboard_is_reopened_and_a_title_edit_ticks_nothing(world, github, database):
    services, *_ = world
    services.lead.refresh_dashboard(REPO)
    with github.state.lock:
        issue = github.state.repo("team", "runtime").issues[3]
        issue.state, issue.state_reason = "closed", "completed"
        box = f"- [ ] <!-- perfbot:action verify {STUCK} -->"
        issue.body = issue.body.replace(box, box.replace("[ ]", "[x]"))
        body = issue.body
    payload = next(p for p in webhook_examples("issues") if p["action"] == "reopened")  # no closed example exists
    payload.update(action="closed")
    payload["issue"].update(number=3, body=body, state="closed")
    payload["sender"]["login"] = "alice"
    payload["repository"]["full_name"] = REPO
    payload.pop("installation", None)
    assert handlers.dispatch(Event("issues", "closed", "close-1", payload, REPO, None), services) == []
    assert dashboards(github)[0].state == "open" and "[x]" not in dashboards(github)[0].body
    assert bench_store.runs_for(database, STUCK, full_name=REPO) == []  # a box seen ticked without an edit: no action


def test_a_fix_verified_by_the_worker_is_told_once_and_redrawn_after_the_run(world, github, database):
    services, worker, _queue, _ = world
    services.lead.refresh_dashboard(REPO)
    assert worker.run_once()  # bench run 1, the fix branch's verification the sync queued, measured for real
    [run] = bench_store.runs_for(database, SLUG, full_name=REPO)
    assert run.status == "done" and run.verdict == "pass", run
    [told] = comments(github, f"<!-- perfbot:notice fix-verified {SLUG} run {run.id} -->")
    assert told.splitlines()[1] == "@lead @ana: 🎉 **Fix verified**"
    body = dashboards(github)[0].body  # re-drawn by the dashboard handler on the same delivery
    assert f"- Fix verified: `{SLUG}`: bench run {run.id} found it fixed" in body
    assert "## Verifications in flight (0)" in body and "## Fixes waiting for a verdict (0)" in body
    assert f"- [ ] <!-- perfbot:action verify {SLUG} --> **" in body and f"`{SLUG}` #1: Every step of a sum boxes " \
        "its value (fixed: " in body
    github.clear_requests()
    services.lead.refresh_dashboard(REPO)
    assert github.writes() == [] and len(comments(github, "<!-- perfbot:notice fix-verified ")) == 1


def test_a_writer_accepts_a_merge_pr_from_the_dashboard(world, github, database):
    services, *_ = world
    pull = github.add_pull(REPO, head_ref=f"perfbot/merge-{STUCK}", base_ref="main", title=f"Merge {SLUG} into {STUCK}",
                           user="perfbot[bot]")
    services.lead.refresh_dashboard(REPO)
    assert f"- [ ] <!-- perfbot:action accept {STUCK} --> **accept the merge PR**: merge PR #{pull} into `{STUCK}`" \
        in dashboards(github)[0].body
    # a PR GitHub lists that no webhook told of (opened while perfbot was down) is on the web dashboard too
    assert pending_merges(database) == [(pull, STUCK, "", "")]
    dashboard = dashboards(github)[0].number  # the PR took #3
    assert tick(github, services, dashboard, STUCK, "accept", "rita") == []  # a reader: refused, nothing merged
    with github.state.lock:
        assert not github.state.repo("team", "runtime").issues[pull].pull.merged
    assert tick(github, services, dashboard, STUCK, "accept", "alice") == []
    with github.state.lock:
        assert github.state.repo("team", "runtime").issues[pull].pull.merged
    [merge] = [w for w in github.writes() if w.method == "PUT"]
    assert merge.path == f"/repos/{REPO}/pulls/{pull}/merge" and merge.json["sha"] and merge.status == 200
    [answer] = comments(github, "<!-- perfbot:dashboard-answer -->")
    assert f"**accept the merge PR** `{STUCK}` (ticked by @alice): merged #{pull}" in answer
    assert "accept the merge PR" not in dashboards(github)[0].body
    assert pending_merges(database) == []  # the redraw after the tick found it merged


def test_a_perf_command_in_a_comment_redraws_the_dashboard(world, github, database):
    services, *_ = world
    services.lead.refresh_dashboard(REPO)
    body = f"/perf verify {STUCK}"
    comment_id = github.add_comment(REPO, 2, body, user="wendy")
    payload = next(p for p in webhook_examples("issue_comment") if p["action"] == "created")
    payload["comment"].update(id=comment_id, body=body)
    payload["comment"]["user"]["login"] = payload["sender"]["login"] = "wendy"
    payload["repository"]["full_name"] = REPO
    payload["issue"].update(number=2, pull_request=None)
    payload.pop("installation", None)
    assert handlers.dispatch(Event("issue_comment", "created", "c-1", payload, REPO, None), services) == []
    [run] = bench_store.runs_for(database, STUCK, full_name=REPO)
    assert f"- bench run {run.id}: `{STUCK}` reproduce, queued" in dashboards(github)[0].body
