"""GitHub Actions through PyGithub: dispatch perfbot's bench workflow, find its run, download its artifact safely."""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

import requests
from github import GithubException
from github.Repository import Repository

from bot.adapters.github.client import classified_errors
from bot.core.events import WorkflowRun
from bot.errors import Invalid, NotAllowed, NotConfigured, TransientError, Unreachable

DOWNLOAD_TIMEOUT_SECONDS = 30


@dataclass(frozen=True)
class Artifact:
    id: int
    name: str
    size: int
    expired: bool


def actions_of(tracker) -> GitHubActions:
    """The tracker of a GitHub repository already holds its authenticated PyGithub repository; local mode's
    file tracker has none, and an actions runner needs GitHub."""
    repo = getattr(tracker, "repo", None)
    if not isinstance(repo, Repository):
        raise NotConfigured("an actions runner needs perfbot connected to GitHub (not local mode)",
                            "the operator sets the App's credentials (docs/deployment.md)", owner="operator")
    return GitHubActions(repo)


class GitHubActions:
    def __init__(self, repo: Repository) -> None:
        self.repo = repo
        self.full_name = repo.full_name

    def default_branch(self) -> str:
        with classified_errors(f"reading {self.full_name}"):
            return self.repo.default_branch

    def dispatch(self, workflow: str, ref: str, inputs: dict[str, str]) -> None:
        try:
            with classified_errors(f"dispatching {workflow} in {self.full_name}"):
                self.repo.get_workflow(workflow).create_dispatch(ref, inputs, throw=True)
        except GithubException as exc:  # no such workflow, or not one with these inputs: the team's to fix
            message = exc.data.get("message") if isinstance(exc.data, dict) else exc.data
            raise NotConfigured(str(message), f"install deploy/github/perfbot-bench.yml as .github/workflows/"
                                f"{workflow} and perfbot_bench.py as .github/perfbot/perfbot_bench.py on {ref}",
                                key=f".github/workflows/{workflow}") from None

    def find_run(self, workflow: str, title: str, created_after: datetime) -> WorkflowRun | None:
        """The dispatched run with this title: GitHub does not answer a dispatch with its run, so it is found
        by its run-name among the workflow's dispatched runs, newest first, back to the dispatch (with a
        minute's slack for clock skew). Not `created=>=...`: GitHub's description types that as a plain
        date-time, so range syntax is left out."""
        since = created_after - timedelta(minutes=1)
        with classified_errors(f"listing runs of {workflow} in {self.full_name}"):
            for run in self.repo.get_workflow(workflow).get_runs(event="workflow_dispatch"):
                if run.created_at < since:
                    return None
                if run.display_title == title:
                    return _run(run)
        return None

    def get_run(self, run_id: int) -> WorkflowRun:
        with classified_errors(f"reading workflow run {run_id} of {self.full_name}"):
            return _run(self.repo.get_workflow_run(run_id))

    def artifacts(self, run_id: int) -> list[Artifact]:
        with classified_errors(f"listing artifacts of workflow run {run_id} in {self.full_name}"):
            return [Artifact(a.id, a.name, a.size_in_bytes, a.expired)
                    for a in self.repo.get_workflow_run(run_id).get_artifacts()]

    def download(self, artifact: Artifact, limit: int) -> bytes:
        """The artifact's zip, at most `limit` bytes, counted while it streams. The API answers with a 302 to a
        signed storage URL, fetched without perfbot's token (it would leak, and storage refuses it); PyGithub's
        own redirect-following only trusts GitHub's domains, which storage is not."""
        if artifact.size > limit:
            raise Invalid(f"{artifact.size} bytes, over the {limit}-byte limit", at=f"artifact {artifact.name}")
        url = f"{self.repo.url}/actions/artifacts/{artifact.id}/zip"
        with classified_errors(f"downloading artifact {artifact.name} of {self.full_name}"):
            status, headers, _body = self.repo.requester.requestJson("GET", url)
        location = {k.lower(): v for k, v in headers.items()}.get("location")
        if status != 302 or not location:
            raise TransientError(f"artifact {artifact.name}: GitHub answered {status} without a download address")
        # https only, unless the API itself is plain http (a local double or a test server).
        if not location.startswith(("https://", self.repo.requester.base_url.split("://")[0] + "://")):
            raise NotAllowed(f"artifact {artifact.name}: refusing a download address that is not https",
                             rule="https downloads only")
        try:
            with requests.get(location, stream=True, timeout=DOWNLOAD_TIMEOUT_SECONDS, allow_redirects=False) as reply:
                if reply.status_code >= 500:
                    raise TransientError(f"artifact {artifact.name}: storage answered {reply.status_code}")
                if reply.status_code != 200:
                    raise Unreachable(f"artifact {artifact.name}: storage answered {reply.status_code}",
                                      host="GitHub's artifact storage")
                if int(reply.headers.get("Content-Length") or 0) > limit:
                    raise Invalid(f"over the {limit}-byte limit", at=f"artifact {artifact.name}")
                data = bytearray()
                for chunk in reply.iter_content(64 * 1024):
                    data += chunk
                    if len(data) > limit:
                        raise Invalid(f"over the {limit}-byte limit", at=f"artifact {artifact.name}")
                return bytes(data)
        except requests.RequestException as exc:
            raise TransientError(f"artifact {artifact.name}: storage unreachable ({exc.__class__.__name__})") from None


def _run(run) -> WorkflowRun:
    return WorkflowRun(run.id, run.display_title or "", run.path or "", run.event or "", run.status or "",
                       run.conclusion, run.actor.login if run.actor else "", run.created_at, run.html_url or "")
