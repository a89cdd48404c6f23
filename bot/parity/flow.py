"""The parity guard on a repository: a PR checked against its base (a check run on its head), local branches
in local mode (a commit status on each head), and the default branch for the digest.

`[parity]` is read from the default branch, as verification settings are: a PR cannot switch its own guard off.
"""
from __future__ import annotations

import logging

from bot.adapters.git import GitError, GitRepository
from bot.adapters.git_fixes import branch_heads, merge_base
from bot.adapters.git_tree import renamed_files, text_files
from bot.adapters.github.checks import CheckResult
from bot.core import refusals
from bot.core.config import ParityConfig
from bot.core.events import PullInfo
from bot.errors import UserError
from bot.parity import view as parity_view
from bot.parity.check import ParityReport, check_change, check_files
from bot.services.bench.bench_inputs import read_config

log = logging.getLogger("perfbot.parity")
CHECK_NAME = "perfbot/parity"
EXTERNAL_ID = "perfbot:parity"


def parity_config(repo: GitRepository, full_name: str) -> ParityConfig | None:
    """The default branch's `[parity]`; None when it has none (the guard is off) or the file is broken."""
    try:
        parity = read_config(repo, repo.resolve(repo.default_ref())).parity
    except UserError as exc:
        log.warning("%s: %s; the parity guard waits until it is repaired", full_name, refusals.log_line(exc))
        return None
    return parity if parity.declared else None


def check_commit(repo: GitRepository, sha: str, parity: ParityConfig) -> ParityReport:
    return check_files(text_files(repo, sha, parity.covers), parity)


def check_range(repo: GitRepository, base: str, head: str, parity: ParityConfig) -> ParityReport:
    """A file renamed by the change is compared with its old self, so a one-sided edit in it still shows."""
    renames = renamed_files(repo, base, head)
    before = text_files(repo, base, lambda path: parity.covers(renames.get(path, path)))
    return check_change({renames.get(path, path): text for path, text in before.items()},
                        text_files(repo, head, parity.covers), parity)


def check_result(report: ParityReport) -> CheckResult:
    return CheckResult(CHECK_NAME, EXTERNAL_ID, "success" if report.ok else "failure",
                       f"Parity: {parity_view.headline(report)}", parity_view.summary_markdown(report),
                       parity_view.check_annotations(report))


class ParityFlow:
    def publish(self, tracker, sha: str, report: ParityReport) -> str:
        """A check run (GitHub App), else a commit status; returns which one was written."""
        return tracker.publish_check(sha, check_result(report), parity_view.status_description(report))

    def pull_changed(self, repo: GitRepository, tracker, full_name: str, pull: PullInfo) -> ParityReport | None:
        """The PR's change as its diff shows it (merge base to head), reported on the head."""
        parity = parity_config(repo, full_name)
        if parity is None:
            return None
        try:
            head = repo.resolve(pull.head_sha)
        except GitError:  # a fork's head is not in our clone; its PR is checked once someone pushes it here
            log.info("%s#%d: head %s not in the clone; no parity check", full_name, pull.number, pull.head_sha[:12])
            return None
        try:
            base = merge_base(repo, repo.resolve(pull.base_sha), head) or pull.base_sha
        except GitError:
            base = merge_base(repo, repo.resolve(repo.default_ref()), head) or head
        report = check_range(repo, base, head, parity)
        written = self.publish(tracker, head, report)
        log.info("%s#%d: parity %s as a %s on %s", full_name, pull.number, parity_view.headline(report), written,
                 head[:12])
        return report

    def branches_changed(self, repo: GitRepository, tracker, full_name: str) -> dict[str, ParityReport]:
        """Local mode has no pull requests: the default head as it stands, every other branch as its change."""
        parity = parity_config(repo, full_name)
        if parity is None:
            return {}
        default_ref = repo.default_ref().removeprefix("refs/heads/")
        default = repo.resolve(repo.default_ref())
        reports = {default_ref: check_commit(repo, default, parity)}
        self.publish(tracker, default, reports[default_ref])
        for branch, head in sorted(branch_heads(repo).items()):
            if branch == default_ref or repo.is_ancestor(head, default):
                continue
            reports[branch] = check_range(repo, merge_base(repo, default, head) or default, head, parity)
            self.publish(tracker, head, reports[branch])
        return reports

    def default_branch(self, repo: GitRepository, full_name: str) -> ParityReport | None:
        parity = parity_config(repo, full_name)
        return check_commit(repo, repo.resolve(repo.default_ref()), parity) if parity else None
