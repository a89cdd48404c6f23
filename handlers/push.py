"""push: a push to the default branch syncs the reports it changed and brings their GitHub issues in step.

Pushes may be handled in any order; the sync moves the store to the newest of its head and the pushed commit
(by git ancestry and the branch as fetched), so a late delivery of an older push changes nothing."""
from __future__ import annotations

from handlers.payload import commit_sha, installation_id, repo_full_name

EVENTS = frozenset({"push"})


def handle(event, services) -> None:
    payload = event.payload
    repository = payload.get("repository") or {}
    default = repository.get("default_branch") or repository.get("master_branch")
    if not default or payload.get("ref") != f"refs/heads/{default}" or payload.get("deleted"):
        return  # other branches are fix branches and drafts: reports count once they land on the default branch
    services.reports.sync_and_mirror(repo_full_name(payload), commit_sha(payload.get("after")),
                                     installation_id(payload))
