"""The GitHub double, driven the way perfbot drives GitHub: real PyGithub over real sockets.

Every test here also checks the double's own responses against GitHub's OpenAPI description
(`validate_responses`), and the `github` fixture fails a test whose requests the description rejects.
"""
from __future__ import annotations

import base64
import time
from concurrent.futures import ThreadPoolExecutor

import github
import jwt
import pytest
import requests
from github import Auth, GithubException, GithubIntegration, GithubRetry

from tests.github_double import GitHubDouble
from tests.github_double.openapi_check import request_checker
from tests.github_double.openapi_paths import RouteIndex
from tests.github_fixtures import github as github_fixture  # noqa: F401  (the fixture under test)
from tests.github_fixtures import github_app_key  # noqa: F401
from tests.npm_fixtures import ghes_openapi_paths, openapi_path, webhook_examples

REPO = "acme/runtime"
APP_ID, INSTALLATION_ID = 4242, 77


@pytest.fixture
def double(github_fixture):
    github_fixture.validate_responses = True  # the double's answers must match GitHub's description too
    github_fixture.add_repo(REPO)
    return github_fixture


def client(double: GitHubDouble, auth: Auth.Auth | None = None, **options) -> github.Github:
    """PyGithub as perfbot would configure it, without its default throttling (0.25 s/request, 1 s/write)."""
    options.setdefault("retry", None)
    return github.Github(base_url=double.url, auth=auth or Auth.Token(double.token), seconds_between_requests=0,
                         seconds_between_writes=0, **options)


def test_issue_lifecycle_with_labels(double):
    repo = client(double).get_repo(REPO)
    issue = repo.create_issue("Boxing in u24 arithmetic", body="ratio 3.4", labels=["perf", "seq"])
    assert (issue.number, issue.state, issue.user.login) == (1, "open", double.login)
    assert [label.name for label in issue.labels] == ["perf", "seq"]
    assert repo.get_label("perf").color == "ededed"  # GitHub creates unknown labels on the fly

    issue.edit(title="Boxing in u24 arithmetic (3.4x)", body="ratio 3.4, see report")
    issue.add_to_labels("needs-verdict")
    issue.remove_from_labels("seq")
    issue.set_labels("perf", "needs-verdict")  # PyGithub sends a bare array here, which GitHub's text allows
    issue.edit(state="closed", state_reason="not_planned")

    again = repo.get_issue(1)
    assert again.title == "Boxing in u24 arithmetic (3.4x)" and again.body == "ratio 3.4, see report"
    assert [label.name for label in again.labels] == ["perf", "needs-verdict"]
    assert (again.state, again.state_reason) == ("closed", "not_planned") and again.closed_at is not None
    assert again.closed_by.login == double.login
    again.edit(state="open")
    assert (repo.get_issue(1).state, repo.get_issue(1).state_reason, repo.get_issue(1).closed_at) == ("open",
                                                                                                      "reopened", None)
    assert [i.number for i in repo.get_issues(state="open", labels=[repo.get_label("perf")])] == [1]
    assert double.violations == []


def test_comments_are_created_edited_listed_and_deleted(double):
    repo = client(double).get_repo(REPO)
    issue = repo.create_issue("t")
    first = issue.create_comment("measuring")
    issue.create_comment("verdict: 3.1x")
    first.edit("measured")
    assert [c.body for c in issue.get_comments()] == ["measured", "verdict: 3.1x"]
    assert repo.get_issue(issue.number).comments == 2
    assert repo.get_issue(issue.number).get_comment(first.id).html_url.endswith(f"/issues/1#issuecomment-{first.id}")
    first.delete()
    assert [c.body for c in repo.get_issues_comments()] == ["verdict: 3.1x"]
    assert repo.get_issue(issue.number).comments == 1


def test_label_crud_and_duplicate_is_422(double):
    repo = client(double).get_repo(REPO)
    label = repo.create_label("perf:seq", "5319e7", "sequential track")
    with pytest.raises(GithubException) as duplicate:
        repo.create_label("PERF:SEQ", "000000")  # label names are case-insensitive on GitHub
    assert duplicate.value.status == 422
    assert duplicate.value.data["message"] == "Validation Failed"
    assert duplicate.value.data["errors"] == [{"resource": "Label", "code": "already_exists", "field": "name"}]
    label.edit("perf:par", "0e8a16", "parallel track")
    assert (repo.get_label("perf:par").color, repo.get_label("perf:par").description) == ("0e8a16", "parallel track")
    repo.get_label("perf:par").delete()
    with pytest.raises(github.UnknownObjectException):
        repo.get_label("perf:par")


def test_reactions_on_comments_and_issues(double):
    repo = client(double).get_repo(REPO)
    issue = repo.create_issue("t")
    comment = issue.create_comment("/perfbot verify")
    eyes = comment.create_reaction("eyes")
    assert comment.create_reaction("eyes").id == eyes.id  # GitHub answers 200 with the existing reaction
    comment.create_reaction("rocket")
    assert sorted(r.content for r in comment.get_reactions()) == ["eyes", "rocket"]
    assert comment.delete_reaction(eyes.id)
    assert [r.content for r in comment.get_reactions()] == ["rocket"]
    issue.create_reaction("+1")
    assert [r.content for r in issue.get_reactions()] == ["+1"]
    assert repo.get_issue(issue.number).reactions["+1"] == 1


def test_contents_files_directories_and_refs(double):
    double.put_content(REPO, "devs/issues/perf_loop.md", "# Loop\nratio: 3.4\n")
    double.put_content(REPO, "devs/issues/perf_box.md", b"# Box\n")
    double.put_content(REPO, "devs/issues/perf_loop.md", "# Loop on a branch\n", ref="fix-loop")
    repo = client(double).get_repo(REPO)
    file = repo.get_contents("devs/issues/perf_loop.md")
    assert file.decoded_content == b"# Loop\nratio: 3.4\n" and file.type == "file"
    assert repo.get_contents("devs/issues/perf_loop.md", ref="fix-loop").decoded_content == b"# Loop on a branch\n"
    assert sorted(entry.name for entry in repo.get_contents("devs/issues")) == ["perf_box.md", "perf_loop.md"]
    with pytest.raises(github.UnknownObjectException):
        repo.get_contents("devs/issues/perf_missing.md")


def test_collaborator_permission(double):
    double.add_repo("acme/secret", private=True)
    double.set_permission(REPO, "alice", "write")
    double.set_permission(REPO, "tom", "triage")
    gh = client(double)
    repo = gh.get_repo(REPO)
    assert repo.get_collaborator_permission("alice") == "write"
    assert (repo.get_collaborator_permission("tom"), repo.get_collaborator_role_name("tom")) == ("read", "triage")
    assert repo.get_collaborator_permission("stranger") == "read"  # anyone can read a public repository
    assert gh.get_repo("acme/secret").get_collaborator_permission("stranger") == "none"


def test_list_pagination_follows_link_headers(double):
    for n in range(75):
        double.add_issue(REPO, f"issue {n}")
    double.clear_requests()
    issues = list(client(double, per_page=30, lazy=True).get_repo(REPO).get_issues(direction="asc"))
    assert [i.title for i in issues] == [f"issue {n}" for n in range(75)]
    assert [r.query.get("page") for r in double.requests] == [None, "2", "3"]
    page = requests.get(f"{double.url}/repos/{REPO}/issues", params={"per_page": 30, "page": 2},
                        headers={"Authorization": f"token {double.token}"}, timeout=5)
    assert page.links["next"]["url"].endswith("page=3") and page.links["prev"]["url"].endswith("page=1")
    assert page.links["last"]["url"].endswith("page=3")
    assert client(double, per_page=30).get_repo(REPO).get_issues().totalCount == 75


def test_search_finds_issues_by_hidden_marker(double):
    double.add_repo("acme/other")
    marker = "<!-- perfbot:record=perf_loop -->"
    gh = client(double)
    repo = gh.get_repo(REPO)
    mine = repo.create_issue("Loop is slow", body=f"report\n{marker}\n")
    repo.create_issue("Unrelated", body="<!-- perfbot:record=perf_box -->")
    closed = repo.create_issue("Old copy", body=marker)
    closed.edit(state="closed")
    gh.get_repo("acme/other").create_issue("Elsewhere", body=marker)
    found = gh.search_issues(f'"{marker}" in:body repo:{REPO} is:issue')
    assert sorted(i.number for i in found) == sorted([mine.number, closed.number]) and found.totalCount == 2
    assert [i.number for i in gh.search_issues(f'"{marker}" in:body repo:{REPO} is:issue is:open')] == [mine.number]
    assert list(gh.search_issues(f'"{marker}" in:title repo:{REPO}')) == []


def test_statuses_and_check_runs_on_a_pull_head(double, github_app_key):
    number = double.add_pull(REPO, head_ref="fix-loop", title="Fix the loop")
    double.install_app(INSTALLATION_ID, [REPO], github_app_key, app_id=APP_ID)
    as_user = client(double).get_repo(REPO)
    pull = as_user.get_pull(number)
    assert (pull.head.ref, pull.base.ref, pull.merged) == ("fix-loop", "main", False)
    commit = as_user.get_commit(pull.head.sha)
    commit.create_status("pending", context="perfbot/verify", description="measuring")
    commit.create_status("success", target_url="http://example.invalid/run/1", context="perfbot/verify")
    combined = commit.get_combined_status()
    assert (combined.state, combined.total_count, combined.statuses[0].state) == ("success", 1, "success")
    # PyGithub's Commit.get_statuses() reads GET /repos/{o}/{r}/statuses/{sha}, a legacy path GitHub's
    # description does not document (it documents /commits/{ref}/statuses): the double says so.
    with pytest.raises(GithubException) as undocumented:
        list(commit.get_statuses())
    assert undocumented.value.status == 400
    assert double.take_violations() == [
        "GET /repos/{owner}/{repo}/statuses/{sha}: method not documented (documented: POST)"]
    with pytest.raises(GithubException) as not_an_app:
        as_user.create_check_run("perfbot/verify", pull.head.sha)
    assert not_an_app.value.status == 403

    as_app = client(double, auth=Auth.AppAuth(APP_ID, github_app_key).get_installation_auth(INSTALLATION_ID))
    run = as_app.get_repo(REPO).create_check_run("perfbot/verify", pull.head.sha, status="in_progress",
                                                 output={"title": "Measuring", "summary": "3 runs"})
    run.edit(conclusion="success", output={"title": "Verified", "summary": "3.1x, within 10%"})
    runs = list(as_app.get_repo(REPO).get_commit(pull.head.sha).get_check_runs())
    assert [(r.name, r.status, r.conclusion, r.output.title) for r in runs] == [
        ("perfbot/verify", "completed", "success", "Verified")]
    assert runs[0].app.id == APP_ID and runs[0].pull_requests[0].number == number


def test_github_app_installation_tokens(double, github_app_key):
    double.add_repo("acme/not-installed")
    double.install_app(INSTALLATION_ID, [REPO], github_app_key, app_id=APP_ID)
    integration = GithubIntegration(auth=Auth.AppAuth(APP_ID, github_app_key), base_url=double.url)
    assert integration.get_repo_installation("acme", "runtime").id == INSTALLATION_ID
    token = integration.get_access_token(INSTALLATION_ID)
    assert token.token.startswith("ghs_") and token.expires_at.timestamp() > time.time() + 3000

    gh = client(double, auth=Auth.AppAuth(APP_ID, github_app_key).get_installation_auth(INSTALLATION_ID))
    issue = gh.get_repo(REPO).create_issue("from the app")
    assert (issue.user.login, issue.user.type) == ("perfbot[bot]", "Bot")
    with pytest.raises(github.UnknownObjectException):  # installation tokens reach only installed repos
        gh.get_repo("acme/not-installed")
    minted = [r for r in double.requests if r.operation == "/app/installations/{installation_id}/access_tokens"]
    scheme, _, sent_jwt = minted[-1].headers["Authorization"].partition(" ")
    assert scheme == "Bearer" and jwt.decode(sent_jwt, options={"verify_signature": False})["iss"] == str(APP_ID)


def test_app_pull_user_and_rate_limit_endpoints_answer_in_documented_shapes(double, github_app_key):
    double.add_repo("acme/not-installed")
    double.install_app(INSTALLATION_ID, [REPO], github_app_key, app_id=APP_ID)
    first = double.add_pull(REPO, head_ref="a")
    double.add_pull(REPO, head_ref="b", merged=True)
    integration = GithubIntegration(auth=Auth.AppAuth(APP_ID, github_app_key), base_url=double.url)
    assert integration.get_app().slug == "perfbot"
    assert [i.id for i in integration.get_installations()] == [INSTALLATION_ID]
    installation = integration.get_app_installation(INSTALLATION_ID)
    assert [r.full_name for r in installation.get_repos()] == [REPO]

    gh = client(double)
    repo = gh.get_repo(REPO)
    assert [p.number for p in repo.get_pulls()] == [first]
    assert sorted(p.merged for p in repo.get_pulls(state="all")) == [False, True]
    assert [i.number for i in repo.get_issues(state="all", direction="asc")] == [1, 2]  # pulls are issues too
    assert gh.get_user("contributor").login == "contributor" and gh.get_user().login == double.login
    assert gh.get_rate_limit().resources.core.limit == 5000

    as_app = client(double, auth=Auth.AppAuth(APP_ID, github_app_key).get_installation_auth(INSTALLATION_ID))
    run = as_app.get_repo(REPO).create_check_run("perfbot/lint", repo.get_pull(first).head.sha,
                                                 conclusion="failure", output={"title": "2 errors", "summary": "x"})
    assert (repo.get_check_run(run.id).status, repo.get_check_run(run.id).conclusion) == ("completed", "failure")


def test_short_lived_installation_tokens_are_renewed(double, github_app_key):
    double.install_app(INSTALLATION_ID, [REPO], github_app_key, app_id=APP_ID, token_ttl_seconds=5)
    gh = client(double, auth=Auth.AppAuth(APP_ID, github_app_key).get_installation_auth(INSTALLATION_ID))
    gh.get_repo(REPO)
    gh.get_repo(REPO)  # PyGithub renews tokens that expire within 20 s, so each request mints one
    assert sum(r.operation == "/app/installations/{installation_id}/access_tokens" for r in double.requests) == 2


def test_jwt_signed_by_another_key_is_rejected(double, github_app_key):
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa

    double.install_app(INSTALLATION_ID, [REPO], github_app_key, app_id=APP_ID)
    other = rsa.generate_private_key(public_exponent=65537, key_size=2048).private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()).decode()
    integration = GithubIntegration(auth=Auth.AppAuth(APP_ID, other), base_url=double.url, retry=None)
    with pytest.raises(GithubException) as rejected:
        integration.get_access_token(INSTALLATION_ID)
    assert rejected.value.status == 401


def test_unknown_or_missing_tokens_get_401(double):
    with pytest.raises(github.BadCredentialsException) as bad:
        client(double, auth=Auth.Token("nope")).get_repo(REPO)
    assert bad.value.data["message"] == "Bad credentials" and bad.value.data["documentation_url"]
    anonymous = requests.get(f"{double.url}/repos/{REPO}", timeout=5)
    assert anonymous.status_code == 401 and anonymous.json()["message"] == "Requires authentication"


def test_a_502_is_retried_by_githubretry(double):
    double.fail_next(1, status=502)
    repo = client(double, retry=GithubRetry(total=3, backoff_factor=0.01)).get_repo(REPO)
    assert repo.full_name == REPO
    assert [r.status for r in double.requests] == [502, 200]


def test_secondary_rate_limit_waits_for_retry_after(double):
    double.rate_limit_next(retry_after=1)
    gh = client(double, retry=GithubRetry(total=3, secondary_rate_wait=30), lazy=True)
    started = time.monotonic()
    gh.get_repo(REPO).create_issue("only once")
    waited = time.monotonic() - started
    assert 1.0 <= waited < 5, waited  # Retry-After (1 s) honoured, not secondary_rate_wait (30 s)
    assert [(r.method, r.status) for r in double.requests] == [("POST", 403), ("POST", 201)]
    assert len(double.state.repo_or_raise(REPO).issues) == 1

    double.rate_limit_next(retry_after=7)
    with pytest.raises(github.RateLimitExceededException) as limited:  # without retries the error surfaces
        client(double).get_repo(REPO)
    assert limited.value.headers["retry-after"] == "7"
    assert limited.value.data["message"].startswith("You have exceeded a secondary rate limit")


def test_rate_limit_headers_count_requests(double):
    gh = client(double)
    gh.get_repo(REPO)
    gh.get_repo(REPO)
    remaining, limit = gh.rate_limiting
    assert (remaining, limit) == (4998, 5000)
    assert double.requests[-1].status == 200 and gh.rate_limiting_resettime > time.time()


def test_requests_the_description_does_not_allow_are_rejected_and_recorded(double):
    headers = {"Authorization": f"token {double.token}"}
    unknown = requests.post(f"{double.url}/repos/{REPO}/issuez", json={"title": "x"}, headers=headers, timeout=5)
    no_title = requests.post(f"{double.url}/repos/{REPO}/issues", json={"body": "x"}, headers=headers, timeout=5)
    bad_state = requests.get(f"{double.url}/repos/{REPO}/issues", params={"state": "shut"}, headers=headers, timeout=5)
    bad_reaction = requests.post(f"{double.url}/repos/{REPO}/issues/1/reactions", json={"content": "party"},
                                 headers=headers, timeout=5)
    assert [r.status_code for r in (unknown, no_title, bad_state, bad_reaction)] == [400, 422, 422, 422]
    violations = double.take_violations()
    assert len(violations) == 4
    assert "no such path" in violations[0]
    assert violations[1] == "POST /repos/{owner}/{repo}/issues: body: 'title' is a required property"
    assert "query parameter 'state'" in violations[2] and "'shut' is not one of" in violations[2]
    assert "'party' is not one of" in violations[3]
    assert double.state.repo_or_raise(REPO).issues == {}  # rejected requests never reach a handler
    assert len(double.writes()) == 3


def test_reads_alone_make_no_writes_and_ghes_prefix_works(double):
    double.add_issue(REPO, "seeded", "body")
    gh = github.Github(base_url=double.ghes_url, auth=Auth.Token(double.token), retry=None,
                       seconds_between_requests=0)
    issue = gh.get_repo(REPO).get_issue(1)
    assert issue.url.startswith(double.ghes_url) and issue.title == "seeded"
    assert [c.body for c in issue.get_comments()] == []
    assert double.writes() == [] and len(double.requests) == 3


def test_route_index_prefers_literal_segments_and_spans_file_paths():
    routes = request_checker().routes
    assert routes.match("GET", "/repos/o/r/issues/comments").template == "/repos/{owner}/{repo}/issues/comments"
    assert routes.match("GET", "/repos/o/r/issues/7").variables == {"owner": "o", "repo": "r", "issue_number": "7"}
    contents = routes.match("GET", "/repos/o/r/contents/devs/issues/perf%20x.md")
    assert contents.variables["path"] == "devs/issues/perf x.md"
    assert routes.match("GET", "/repos/o/r/compare/main...fix").variables["basehead"] == "main...fix"
    small = RouteIndex({"/a/{x}": {"get": {}}, "/a/b": {"post": {}}})
    assert small.match("GET", "/a/b").template == "/a/{x}"  # the literal has no GET, so the variable wins


def test_concurrent_writes_get_distinct_issue_numbers(double):
    def create(n: int) -> int:
        reply = requests.post(f"{double.url}/repos/{REPO}/issues", json={"title": f"t{n}"},
                              headers={"Authorization": f"token {double.token}"}, timeout=10)
        assert reply.status_code == 201, reply.text
        return reply.json()["number"]

    with ThreadPoolExecutor(max_workers=4) as pool:
        numbers = list(pool.map(create, range(40)))
    assert sorted(numbers) == list(range(1, 41))


def test_missing_npm_fixtures_say_how_to_install_them(monkeypatch, tmp_path):
    from tests import npm_fixtures

    monkeypatch.setattr(npm_fixtures, "OPENAPI_DIR", tmp_path)
    with pytest.raises(npm_fixtures.NpmFixturesMissing, match="scripts/ensure-npm-fixtures"):
        npm_fixtures.openapi_path()


def test_npm_fixtures_are_found():
    assert openapi_path().name == "api.github.com.json" and ghes_openapi_paths()
    examples = webhook_examples("issue_comment")
    assert examples and {"action", "issue", "comment", "repository"} <= set(examples[0])
    with pytest.raises(KeyError):
        webhook_examples("no_such_event")


def test_content_sha_is_git_blob_sha(double):
    sha = double.put_content(REPO, "a.txt", "hello\n")
    assert sha == "ce013625030ba8dba906f756967f9e9ca394464a"  # `git hash-object` of "hello\n"
    raw = requests.get(f"{double.url}/repos/{REPO}/contents/a.txt", headers={"Authorization": f"token {double.token}"},
                       timeout=5).json()
    assert raw["sha"] == sha and base64.b64decode(raw["content"]) == b"hello\n"
