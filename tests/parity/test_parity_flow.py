"""The parity guard end to end: a PR's check run with annotations on the GitHub double (requests and answers
checked against GitHub's description), a commit status with a token and in local mode, the digest section."""
from __future__ import annotations

import json
from contextlib import contextmanager
from datetime import UTC, datetime

import pytest

import handlers
from bot.adapters.local_issues import FileIssues
from bot.services.worker import Event
from tests.gitrepo import RepoBuilder
from tests.npm_fixtures import webhook_examples
from tests.parity.test_parity import CUDA_ADD, NAMES, marked

REPO, APP_ID, INSTALLATION_ID = "team/gpu", 4242, 77
CONFIG = '[parity]\nfiles = ["runtime/gpu/*.h"]\n' + NAMES
KERNELS = "runtime/gpu/kernels.h"


def lonely_cuda(n: int) -> str:
    return "".join(f"// @cuda only_{i}\n__global__ void only_{i}(float* x) {{ __syncthreads(); }}\n"
                   for i in range(n))


@pytest.fixture
def remote(tmp_path):
    repo = RepoBuilder(tmp_path / "remotes" / "team" / "gpu.git")
    main = repo.write(".perfbot.toml", CONFIG).write(KERNELS, marked()).write("README.md", "gpu\n").commit("kernels")
    heads = {"main": main}
    for branch, text in (("cuda-only", marked(cuda_body=CUDA_ADD.replace("i < 64", "i < 32"))),
                         ("both-sides", marked("vec_add", "vec_add")),
                         ("many", marked() + lonely_cuda(60))):
        repo.repo.git.checkout("-q", "-b", branch, main)
        heads[branch] = repo.write(KERNELS, text).commit(f"kernels: {branch}")
    repo.repo.git.checkout("-q", "main")
    return repo, heads


@contextmanager
def app_bot(github, database, tmp_path, app_key: str | None = None):
    """perfbot against the double, as a GitHub App installation (check runs) or with a token (statuses)."""
    from bot.adapters.clones import Clones
    from bot.adapters.github.client import GitHubClients
    from bot.adapters.github.issues import GitHubIssues
    from bot.adapters.store.queue import DeliveryQueue
    from bot.config import Settings
    from bot.services.bench.fix_flow import FixFlow
    from bot.services.usecases import BotServices, RepoSource

    github.use_git_remotes(tmp_path / "remotes")
    auth = {"github_app_id": str(APP_ID), "github_private_key": app_key} if app_key else {"github_token": github.token}
    settings = Settings(instance_dir=tmp_path, database_url=database.url, github_api_url=github.url,
                        github_request_interval=0, github_write_interval=0, **auth)
    clients = GitHubClients(settings)
    clones = Clones(tmp_path / "clones", f"file://{tmp_path / 'remotes'}")
    services = BotServices(database, lambda name, inst: GitHubIssues(clients.for_installation(inst), name,
                                                                     clients.own_login),
                           RepoSource(fetch=lambda name, _inst: clones.fetch(name)), bot_login="perfbot[bot]",
                           fixes=FixFlow(database, DeliveryQueue(database).enqueue))
    try:
        yield services
    finally:
        clients.close()


@pytest.fixture
def app_double(github, github_app_key):
    github.validate_responses = True  # the annotations perfbot reads back must look like GitHub's too
    github.add_repo(REPO)
    github.install_app(INSTALLATION_ID, [REPO], github_app_key, app_id=APP_ID)
    yield github


def pull_event(heads, branch: str, action: str = "opened", number: int = 1) -> Event:
    payload = next(p for p in webhook_examples("pull_request") if p["action"] == action)
    pr = payload["pull_request"]
    pr.update(number=number, body="GPU work", merged=False, draft=False)
    pr["head"].update(ref=branch, sha=heads[branch])
    pr["head"]["repo"]["full_name"] = REPO
    pr["base"].update(ref="main", sha=heads["main"])
    payload["repository"]["full_name"] = REPO
    payload["installation"] = {"id": INSTALLATION_ID}
    return Event("pull_request", action, f"delivery-{branch}-{action}", payload, REPO, INSTALLATION_ID)


def app_client(github, key):
    from github import Auth, Github

    return Github(base_url=github.url, auth=Auth.AppAuth(APP_ID, key).get_installation_auth(INSTALLATION_ID))


def open_pull(github, heads, branch: str) -> None:
    github.add_pull(REPO, head_ref=branch, head_sha=heads[branch], base_ref="main", base_sha=heads["main"])


def test_a_pr_changing_one_twin_gets_a_failing_check_run_annotated_on_both_twins(app_double, remote, database,
                                                                                   tmp_path, github_app_key):
    _, heads = remote
    open_pull(app_double, heads, "cuda-only")
    with app_bot(app_double, database, tmp_path, github_app_key) as services:
        assert handlers.dispatch(pull_event(heads, "cuda-only"), services) == []
        assert handlers.dispatch(pull_event(heads, "cuda-only", "synchronize"), services) == []
    gh = app_client(app_double, github_app_key)
    [run] = list(gh.get_repo(REPO).get_commit(heads["cuda-only"]).get_check_runs())  # edited, not repeated
    assert (run.name, run.status, run.conclusion) == ("perfbot/parity", "completed", "failure")
    assert run.output.title == "Parity: 1 parity problem(s) in 1 twin pair(s)"
    assert "**one-sided-change**" in run.output.summary
    notes = list(run.get_annotations())
    assert [(a.path, a.start_line, a.annotation_level) for a in notes][:2] == [(KERNELS, 12, "failure"),
                                                                                (KERNELS, 3, "failure")]
    assert "edits the CUDA block `vector_add` (runtime/gpu/kernels.h:12-19) but not its Metal twin " \
           "(runtime/gpu/kernels.h:3-9)" in notes[0].message


def test_a_check_run_is_written_again_only_when_its_result_changes(app_double, remote, database, tmp_path,
                                                                   github_app_key):
    repo, heads = remote
    open_pull(app_double, heads, "cuda-only")
    commit = app_client(app_double, github_app_key).get_repo(REPO).get_commit(heads["cuda-only"])
    with app_bot(app_double, database, tmp_path, github_app_key) as services:
        assert handlers.dispatch(pull_event(heads, "cuda-only"), services) == []
        assert handlers.dispatch(pull_event(heads, "cuda-only", "reopened"), services) == []
        assert len(list(commit.get_check_runs())) == 1
        repo.write(".perfbot.toml", CONFIG.replace('files = ["runtime/gpu/*.h"]', 'files = ["other/*.h"]'))
        repo.commit("parity: watch other files")  # the default branch's settings are the ones that count
        assert handlers.dispatch(pull_event(heads, "cuda-only", "synchronize"), services) == []
    newest, older = list(commit.get_check_runs())
    assert (newest.conclusion, older.conclusion) == ("success", "failure")
    assert newest.output.title == "Parity: 0 Metal/CUDA twin pair(s) in step" and list(newest.get_annotations()) == []


def test_a_pr_renaming_a_pair_on_both_sides_passes(app_double, remote, database, tmp_path, github_app_key):
    _, heads = remote
    open_pull(app_double, heads, "both-sides")
    commit = app_client(app_double, github_app_key).get_repo(REPO).get_commit(heads["both-sides"])
    with app_bot(app_double, database, tmp_path, github_app_key) as services:
        assert handlers.dispatch(pull_event(heads, "both-sides", "ready_for_review"), services) == []
        assert list(commit.get_check_runs()) == []  # no new head: nothing to check
        assert handlers.dispatch(pull_event(heads, "both-sides"), services) == []
    [run] = list(app_client(app_double, github_app_key).get_repo(REPO).get_commit(heads["both-sides"]).get_check_runs())
    assert run.conclusion == "success" and run.output.title == "Parity: 1 Metal/CUDA twin pair(s) in step"
    assert list(run.get_annotations()) == []


def test_more_than_fifty_annotations_go_in_batches(app_double, remote, database, tmp_path, github_app_key):
    _, heads = remote
    open_pull(app_double, heads, "many")
    with app_bot(app_double, database, tmp_path, github_app_key) as services:
        assert handlers.dispatch(pull_event(heads, "many"), services) == []
    [run] = list(app_client(app_double, github_app_key).get_repo(REPO).get_commit(heads["many"]).get_check_runs())
    notes = list(run.get_annotations())
    assert run.output.annotations_count == 60 and len(notes) == 60
    assert notes[-1].message.startswith("CUDA block `only_59` (runtime/gpu/kernels.h:")


def test_with_a_token_the_result_is_a_commit_status(github, remote, database, tmp_path):
    _, heads = remote
    github.add_repo(REPO)
    open_pull(github, heads, "cuda-only")
    with app_bot(github, database, tmp_path, ) as services:
        assert handlers.dispatch(pull_event(heads, "cuda-only"), services) == []
    with github.state.lock:
        statuses = [(s.context, s.state, s.description) for s in github.state.repo("team", "gpu").statuses]
        runs = list(github.state.repo("team", "gpu").check_runs.values())
    assert runs == [] and statuses == [("perfbot/parity", "failure", "1 parity problem(s) in 1 twin pair(s); first: "
                                        "one-sided-change at runtime/gpu/kernels.h:12")]


def local_services(database, tmp_path, path):
    from bot.adapters.git import local_full_name
    from bot.services.usecases import BotServices, RepoSource

    folder = tmp_path / "local-github"
    services = BotServices(database, lambda name, inst: FileIssues(folder),
                           RepoSource(local={local_full_name(path): path}),
                           bot_login="perfbot")
    return services, local_full_name(path), folder


def test_local_mode_sets_a_status_on_the_default_head_and_on_every_branch(remote, database, tmp_path):
    repo, heads = remote
    services, key, folder = local_services(database, tmp_path, repo.root)
    services.reports.sync_and_mirror(key, None, None)
    state = json.loads((folder / "issues.json").read_text())
    statuses = {sha: s["perfbot/parity"]["state"] for sha, s in state["statuses"].items()}
    assert statuses == {heads["main"]: "success", heads["cuda-only"]: "failure", heads["both-sides"]: "success",
                        heads["many"]: "failure"}
    check = state["checks"][heads["cuda-only"]]["perfbot/parity"]
    assert [(a["path"], a["start_line"]) for a in check["annotations"]] == [(KERNELS, 12), (KERNELS, 3)]


def test_a_one_sided_edit_in_a_renamed_file_is_still_compared_with_the_old_file(remote, database, tmp_path):
    from bot.adapters.git import GitRepository
    from bot.parity.flow import check_range, parity_config

    repo, heads = remote
    repo.repo.git.checkout("-q", "-b", "moved", heads["main"])
    repo.rename(KERNELS, "runtime/gpu/vector.h")
    repo.write("runtime/gpu/vector.h", marked(cuda_body=CUDA_ADD.replace("i < 64", "i < 8")))
    head = repo.commit("kernels: move, and change the CUDA side")
    repo.repo.git.checkout("-q", "main")
    git_repo = GitRepository(repo.root)
    try:
        report = check_range(git_repo, heads["main"], head, parity_config(git_repo, REPO))
    finally:
        git_repo.close()
    [finding] = report.findings
    assert finding.rule == "one-sided-change" and "(runtime/gpu/vector.h:12-19)" in finding.message


def test_the_digest_lists_parity_problems_on_the_default_branch(remote, database, tmp_path):
    repo, _heads = remote
    repo.write(KERNELS, marked("vector_add", "vector_sum")).commit("kernels: rename the CUDA side only")
    services, key, folder = local_services(database, tmp_path, repo.root)
    services.reports.sync_and_mirror(key, None, None)
    body = services.lead.preview_digest(key, None, datetime(2026, 12, 1, tzinfo=UTC))
    section = body[body.index("## Parity on the default branch (2)"):]
    assert "| missing-twin | `runtime/gpu/kernels.h:3` | Metal block `vector_add` (runtime/gpu/kernels.h:3-9) " \
           "has no CUDA twin in this file" in section
    assert "| missing-twin | `runtime/gpu/kernels.h:12` | CUDA block `vector_sum`" in section
    posted = services.lead.post_digest(key, None, datetime(2026, 12, 1, tzinfo=UTC))
    assert "CUDA block `vector_sum`" in (folder / f"{posted['issue']}.md").read_text()


def test_without_a_parity_section_the_guard_is_off_and_the_digest_leaves_it_out(database, tmp_path):
    repo = RepoBuilder(tmp_path / "plain")
    repo.write(KERNELS, marked("a", "b")).write("README.md", "x\n").commit("no config")
    services, key, folder = local_services(database, tmp_path, repo.root)
    services.reports.sync_and_mirror(key, None, None)
    state = json.loads((folder / "issues.json").read_text()) if (folder / "issues.json").exists() else {}
    assert "statuses" not in state
    body = services.lead.preview_digest(key, None, datetime(2026, 12, 1, tzinfo=UTC))
    assert "parity" not in body.lower()  # nothing checked, nothing to say: the section is left out, not empty
