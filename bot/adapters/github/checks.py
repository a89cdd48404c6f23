"""Check runs with line annotations (GitHub App only): one per name and head, written again only when its
result changed."""
from __future__ import annotations

from dataclasses import dataclass

from github import GithubException, RateLimitExceededException
from github.Repository import Repository

from bot.adapters.github.client import classified_errors

ANNOTATIONS_PER_REQUEST = 50  # the Checks API's limit; later batches are appended by updates


@dataclass(frozen=True)
class CheckResult:
    name: str  # e.g. perfbot/parity
    external_id: str  # how perfbot finds its own run again on that head
    conclusion: str  # success | failure | neutral
    title: str
    summary: str
    annotations: tuple[dict, ...] = ()  # path, start_line, end_line, annotation_level, title, message


def publish_check_run(repo: Repository, full_name: str, sha: str, result: CheckResult) -> bool:
    """The check run on `sha`; False when the credentials cannot write check runs (a personal token)."""
    what = f"check run {result.name} on {sha[:12]} of {full_name}"
    batches = [list(result.annotations[i:i + ANNOTATIONS_PER_REQUEST])
               for i in range(0, len(result.annotations), ANNOTATIONS_PER_REQUEST)] or [[]]
    output = lambda batch: {"title": result.title[:255], "summary": result.summary[:65000],  # noqa: E731
                            **({"annotations": batch} if batch else {})}
    with classified_errors(what):
        for run in repo.get_commit(sha).get_check_runs(check_name=result.name):
            if run.external_id == result.external_id:
                if _same(run, result):
                    return True  # a redelivery, or the same head seen again: nothing new to say
                break  # a different result (its settings changed): a new run, since updates append annotations
        try:
            run = repo.create_check_run(result.name, sha, external_id=result.external_id, status="completed",
                                        conclusion=result.conclusion, output=output(batches[0]))
        except RateLimitExceededException:
            raise
        except GithubException as exc:
            retry_after = any(k.lower() == "retry-after" for k in (exc.headers or {}))
            if exc.status == 403 and not retry_after:  # only a GitHub App may write check runs
                return False
            raise
        for batch in batches[1:]:
            run.edit(output=output(batch))  # each update appends its annotations
    return True


def _same(run, result: CheckResult) -> bool:
    output = run.output
    return (run.conclusion == result.conclusion and output.title == result.title[:255]
            and output.summary == result.summary[:65000] and output.annotations_count == len(result.annotations))
