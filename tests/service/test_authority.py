"""Only the bot speaks as the bot, only writers command it, a replay changes nothing, and what it reposts acts
on nobody: `perfbot serve`'s app and worker against the GitHub double, every event a signed webhook delivery."""
from __future__ import annotations

import copy
import itertools
from datetime import UTC, datetime, timedelta

import pytest
from markdown_it import MarkdownIt
from sqlalchemy import update

from bot.adapters.store.bench import bench_store
from bot.adapters.store.lead import notice_store
from bot.adapters.store.service_models import Delivery
from bot.app.runtime import Runtime
from bot.config import Settings
from bot.core.lead.dashboard import MARKER
from tests.bench_project import CONFIG, build_project
from tests.npm_fixtures import webhook_examples
from tests.reports import canonical_report
from tests.servers import serving
from tests.webhooks import comment_payload, post_delivery

REPO, SLUG, OTHER, BRANCH, SECRET = "team/runtime", "perf_boxed_sum", "perf_sort_allocates", "unbox-accumulator", "s3"
ROLES = {"alice": "admin", "wendy": "write", "rita": "read"}
ISSUE, OTHER_ISSUE = 1, 2
NOTIFY = '\n[notify]\npeople = ["lead"]\n'
_deliveries = itertools.count(1)


@pytest.fixture
def bot(github, database, tmp_path):
    """perfbot as `perfbot serve` wires it (token auth), its reports mirrored; yields (runtime, url, heads)."""
    github.add_repo(REPO)
    for login, role in ROLES.items():
        github.set_permission(REPO, login, role)
    github.use_git_remotes(tmp_path / "remotes")
    remote, heads = build_project(tmp_path / "remotes" / "team" / "runtime.git")
    remote.repo.git.branch(BRANCH, heads["fix/perf_boxed_sum"])
    remote.repo.git.branch("-D", "fix/perf_boxed_sum")
    remote.write(".perfbot.toml", CONFIG + NOTIFY)
    remote.write(f"devs/issues/{OTHER}.md", canonical_report(
        OTHER, title="Sorting allocates, says @ana", extra_prose=(
            "</details>\n\n**verified: pass** <!-- perfbot:action close perf_boxed_sum -->\n\n"
            "Thanks @octocat and @team/leads for the profile.")))
    heads["main"] = remote.commit("a second report, written to get out of its fold")
    settings = Settings(instance_dir=tmp_path / "instance", database_url=database.url, webhook_secrets=(SECRET,),
                        github_token=github.token, github_api_url=github.url,
                        git_base_url=f"file://{tmp_path / 'remotes'}", github_request_interval=0,
                        github_write_interval=0)
    runtime = Runtime(settings)
    runtime.services.reports.sync_and_mirror(REPO, None, None)  # issues #1 and #2 mirror the reports
    with serving(runtime.app) as url:
        yield runtime, url, heads
    runtime.stop()


def deliver(runtime, url: str, event: str, payload: dict, delivery: str | None = None) -> None:
    """Send a signed delivery as GitHub does, then let the worker run it (and what it queues) to the end; bench
    runs are left queued: what is asserted is how many there are, not what they measure."""
    sent = post_delivery(url, event, payload, secret=SECRET, delivery=delivery or f"d{next(_deliveries)}")
    assert sent.status_code == 202
    while True:
        with runtime.db.session() as session:
            session.execute(update(Delivery).where(Delivery.event == "perfbot.verify").values(
                next_attempt_at=datetime.now(UTC) + timedelta(days=1)))
        if not runtime.workers[0].run_once():
            break


def comments(github, number: int) -> list:
    with github.state.lock:
        return [(c.user.login, c.body) for c in github.state.repo("team", "runtime").comments.values()
                if c.issue_number == number]


def test_a_readers_comment_with_a_marker_is_left_alone_and_the_answer_goes_in_perfbots_own(bot, github):
    runtime, url, _ = bot
    asked = github.add_comment(REPO, ISSUE, "/perf status", user="wendy")
    spoof = f"<!-- perfbot:answer {asked} -->\nperfbot says: everything is fixed, close it."
    spoof_id = github.add_comment(REPO, ISSUE, spoof, user="rita")  # written to look like the answer to come
    deliver(runtime, url, "issue_comment", comment_payload(REPO, ISSUE, asked, "/perf status", "wendy"))
    with github.state.lock:
        assert github.state.repo("team", "runtime").comments[spoof_id].body == spoof
    answers = [(who, body) for who, body in comments(github, ISSUE) if body.startswith(f"<!-- perfbot:answer {asked}")]
    assert [who for who, _ in answers] == ["rita", github.login]
    assert f"`{SLUG}`: open" in answers[1][1]


def test_a_look_alike_dashboard_is_never_adopted_and_its_ticks_do_nothing(bot, github, database):
    runtime, url, _ = bot
    look_alike = f"{MARKER}\n- [ ] <!-- perfbot:action close {OTHER} --> close `{OTHER}`\n"
    fake = github.add_issue(REPO, "perfbot campaign dashboard", look_alike, user="rita",
                            labels=("perfbot", "perfbot-dashboard"))
    runtime.services.lead.refresh_dashboard(REPO)  # no dashboard stored yet: perfbot opens its own
    real, _ = notice_store.dashboard_row(database, REPO)
    assert real != fake
    ticked = look_alike.replace("[ ]", "[x]")
    payload = copy.deepcopy(next(p for p in webhook_examples("issues") if p["action"] == "edited"))
    payload["issue"].update(number=fake, body=ticked)
    payload["sender"]["login"] = "alice"  # a maintainer ticks the box, as the reader hoped
    payload["repository"]["full_name"] = REPO
    payload["changes"] = {"body": {"from": look_alike}}
    payload.pop("installation", None)
    github.clear_requests()
    deliver(runtime, url, "issues", payload)
    with github.state.lock:
        issues = github.state.repo("team", "runtime").issues
        assert issues[OTHER_ISSUE].state == "open" and issues[fake].body == look_alike
    assert comments(github, fake) == []
    assert not [w for w in github.writes() if f"/issues/{fake}" in w.path]


@pytest.mark.parametrize("editor", ["rita", "alice"])
def test_commands_edited_into_someone_elses_comment_run_with_the_editors_standing(bot, github, database, editor):
    runtime, url, _ = bot
    before = "Looks slow to me."
    comment_id = github.add_comment(REPO, ISSUE, before, user="wendy")
    deliver(runtime, url, "issue_comment", comment_payload(REPO, ISSUE, comment_id, before, "wendy"))
    after = f"{before}\n/perf verify {SLUG}\n/perf close {SLUG} reason=\"not real\"\n/perf status"
    deliver(runtime, url, "issue_comment", comment_payload(REPO, ISSUE, comment_id, after, "wendy", sender=editor,
                                                           edited_from=before))
    [(_, answer)] = [(w, b) for w, b in comments(github, ISSUE) if b.startswith(f"<!-- perfbot:answer {comment_id}")]
    assert answer.count("🚫") == 2 and f"edited into wendy's comment by @{editor}" in answer
    assert f"`{SLUG}`: open" in answer  # a read-only command runs for anyone
    assert bench_store.runs_for(database, SLUG, full_name=REPO) == []
    with github.state.lock:
        assert github.state.repo("team", "runtime").issues[ISSUE].state == "open"


def test_a_replayed_delivery_and_four_prs_on_one_head_queue_one_run_each(bot, github, database):
    runtime, url, heads = bot
    comment_id = github.add_comment(REPO, ISSUE, f"/perf verify {SLUG}", user="wendy")
    payload = comment_payload(REPO, ISSUE, comment_id, f"/perf verify {SLUG}", "wendy")
    deliver(runtime, url, "issue_comment", payload, delivery="first")
    answer = [b for _, b in comments(github, ISSUE) if b.startswith(f"<!-- perfbot:answer {comment_id}")]
    github.clear_requests()
    deliver(runtime, url, "issue_comment", payload, delivery="the-same-body-again")
    assert [d["status"] for d in runtime.queue.listing(limit=500) if d["id"] == "the-same-body-again"] == ["done"]
    assert [b for _, b in comments(github, ISSUE) if b.startswith(f"<!-- perfbot:answer {comment_id}")] == answer
    assert [r.id for r in bench_store.runs_for(database, SLUG, full_name=REPO)] == [1]
    assert not [w for w in github.writes() if "/comments" in w.path]  # no second answer, no second reaction

    pulls = []
    for number in range(4):  # four PRs from four branches at one head, each naming the report
        pull = github.add_pull(REPO, head_ref=f"{BRANCH}-{number}", head_sha=heads["fix/perf_boxed_sum"],
                               base_ref="main", base_sha=heads["main"], body=f"Fixes {SLUG}", user="wendy")
        event = copy.deepcopy(next(p for p in webhook_examples("pull_request") if p["action"] == "opened"))
        event["pull_request"].update(number=pull, body=f"Fixes {SLUG}", merged=False, draft=False)
        event["pull_request"]["head"].update(ref=f"{BRANCH}-{number}", sha=heads["fix/perf_boxed_sum"])
        event["pull_request"]["head"]["repo"]["full_name"] = REPO
        event["pull_request"]["base"].update(ref="main", sha=heads["main"])
        event["repository"]["full_name"] = REPO
        event.pop("installation", None)
        deliver(runtime, url, "pull_request", event)
        pulls.append(pull)
    fix_runs = [r for r in bench_store.runs_for(database, SLUG,
                                                full_name=REPO) if r.head == heads["fix/perf_boxed_sum"]]
    assert [(r.purpose, r.pr) for r in fix_runs] == [("fix", pulls[0])]
    verifies = [d["id"] for d in runtime.queue.listing(limit=500) if d["event"] == "perfbot.verify"]
    assert sorted(verifies) == sorted(f"bench-{r.id}" for r in bench_store.runs_for(database, SLUG, full_name=REPO))


def test_a_reports_html_stays_in_its_fold_and_its_mentions_ping_nobody(bot, github):
    with github.state.lock:
        issue = github.state.repo("team", "runtime").issues[OTHER_ISSUE]
        title, body = issue.title, issue.body
    assert "@ana" not in title and "@\u200bana" in title
    tokens = MarkdownIt("commonmark").parse(body)
    html = [t.content.strip() for t in tokens if t.type == "html_block"]
    assert len(html) == 3 and html[0] == "<!-- perfbot:record perf_sort_allocates -->" and html[2] == "</details>"
    assert html[1].startswith("<details><summary>The report at ")  # the report's </details> and marker are code
    [fold] = [t for t in tokens if t.type == "fence"]
    assert "</details>" in fold.content and "Thanks @octocat and @team/leads" in fold.content
    outside = "".join(t.content for t in tokens if t.type == "inline")
    assert "@octocat" not in outside and "@team" not in outside  # mentions only where GitHub does not notify
