"""Fixes: attach a PR or branch to the records it claims to fix, ask for their verification, and close a
record when its fix merged with a passing verdict on that very head.

A claim comes from a PR body line `Fixes perf_x`, a branch `fix/perf_x...`, or the report's own `fix:`
field naming a branch. Unknown slugs are ignored: a PR may mention reports that were merged away.
"""
from __future__ import annotations

import json
import logging
from collections.abc import Callable
from dataclasses import dataclass

from bot.adapters.git import GitError, GitRepository
from bot.adapters.git_fixes import FixDiff, branch_heads, fix_diff
from bot.adapters.store.bench import bench_store, fix_store
from bot.adapters.store.engine import Database
from bot.adapters.store.locks import repo_lock
from bot.adapters.store.queue import NewDelivery
from bot.core.config import PerfbotFile
from bot.core.config.run import Verify
from bot.core.events import PullInfo
from bot.core.tracker.fixes import slugs_fixed, token_delta
from bot.core.tracker.refnames import branch_name_problem
from bot.core.verify.run_parts import RunOptions
from bot.core.verify.verify_plan import claim_fingerprint
from bot.core.verify.vocabulary import Purpose
from bot.errors import UserError
from bot.services.bench.bench_inputs import FIX, REPRODUCE, read_config, read_record

log = logging.getLogger("perfbot.fixes")
Enqueue = Callable[[NewDelivery], bool]





@dataclass(frozen=True)
class Attached:
    fix: fix_store.FixRow
    run_id: int | None  # the verification it asked for, if any


class FixFlow:
    def __init__(self, db: Database, enqueue: Enqueue) -> None:
        self.db = db
        self.enqueue = enqueue

    def request_run(self, full_name: str, slug: str, *, base: str | None, head: str, purpose: Purpose,
                    installation_id: int | None, pr_number: int | None = None, requested_by: str = "",
                    options: RunOptions | None = None) -> int:
        """A bench run of `slug` at `head` for `purpose`: the one already queued or running, else a new one, so
        however many PRs, branches or commands point at one head, it is measured once at a time."""
        with repo_lock(self.db, f"{full_name} bench runs"):  # not the repository's: a long sync holds that
            run_id = bench_store.unfinished_run(self.db, full_name, slug, head, purpose) or bench_store.queue_run(
                self.db, full_name, slug, base=base, head=head, purpose=purpose, pr_number=pr_number,
                requested_by=requested_by, options=options)
            # Queued again for a run that exists: the queue keeps one delivery per id, and a crash between the
            # row and its delivery is healed by the next request.
            self.enqueue(NewDelivery(f"bench-{run_id}", "perfbot.verify", purpose, full_name, installation_id,
                                     json.dumps({"run": run_id})))
        return run_id

    def pull_changed(self, repo: GitRepository, full_name: str, pull: PullInfo,
                     installation_id: int | None) -> list[Attached]:
        """A PR opened, edited or pushed to: attach it to what it fixes and verify a new head of our own repo."""
        records = fix_store.open_records(self.db, full_name)
        claimed = [s for s in slugs_fixed(pull.body, pull.head_ref) if s in records]
        claimed += [s for s, r in records.items() if r.fix == pull.head_ref and s not in claimed]
        if not claimed:
            return []
        default = repo.resolve(repo.default_ref())
        diff = self._pull_diff(repo, full_name, pull, default)
        config = _config(repo, default, full_name)
        # Only code from this repository is benchmarked unasked: a fork's waits for someone with write access.
        auto = config.verify.fixes and pull.same_repo and not pull.draft and not pull.merged
        attached = []
        for slug in claimed:
            source = "branch" if pull.head_ref.startswith(f"fix/{slug}") else \
                "report" if records[slug].fix == pull.head_ref else "pr-body"
            fix, _ = self._attach_pull(full_name, pull, slug, source, diff, pull.author)
            run_id = None
            # One automatic run per record and head, whichever PR (or branch scan) saw the head first; a run's
            # commit status is on the head, so every PR at that head shows the one a PR's run sets.
            if auto and not fix_store.has_run(self.db, full_name, slug, FIX, pull.head_sha):
                run_id = self.request_run(full_name, slug, base=fix.base_sha, head=pull.head_sha, purpose=FIX,
                                          installation_id=installation_id, pr_number=pull.number,
                                          requested_by=pull.author)
            attached.append(Attached(fix, run_id))
        return attached

    def attach_by_command(self, repo: GitRepository, full_name: str, pull: PullInfo, slug: str,
                          actor: str) -> fix_store.FixRow:
        """`/perf attach` (or a verify that names the report): this PR is a fix of `slug`, whatever it says."""
        diff = self._pull_diff(repo, full_name, pull, repo.resolve(repo.default_ref()))
        return self._attach_pull(full_name, pull, slug, "command", diff, actor)[0]

    def _pull_diff(self, repo: GitRepository, full_name: str, pull: PullInfo, default: str) -> FixDiff | None:
        try:
            return fix_diff(repo, default, repo.resolve(pull.head_sha))
        except Exception:  # a fork's head is not in our clone: attach without stats rather than not at all
            log.info("%s#%d: head %s not in the clone; no diff stats", full_name, pull.number, pull.head_sha[:12])
            return None

    def _attach_pull(self, full_name: str, pull: PullInfo, slug: str, source: str, diff: FixDiff | None,
                     actor: str) -> tuple[fix_store.FixRow, bool]:
        return fix_store.attach(
            self.db, full_name, slug, pull.head_ref, source=source, head_sha=pull.head_sha,
            base_sha=diff.base if diff else pull.base_sha, pr_number=pull.number,
            stats=diff.stats if diff else None, token_delta=token_delta(list(diff.changes)) if diff else None,
            attached_by=actor)

    def branches_changed(self, repo: GitRepository, full_name: str, installation_id: int | None) -> list[Attached]:
        """Fix branches in the repository itself (`fix:` fields, `fix/perf_x` branches): attached and verified
        when their head moves, so a repository without pull requests (local mode) gets verdicts too."""
        records = fix_store.open_records(self.db, full_name)
        heads = branch_heads(repo)
        default_ref = repo.default_ref().removeprefix("refs/heads/")
        default = repo.resolve(repo.default_ref())
        config = _config(repo, default, full_name)
        attached = []
        for slug, record in sorted(records.items()):
            branches = [b for b in heads if b.startswith(f"fix/{slug}") and b[len(f"fix/{slug}"):][:1] in ("", "-",
                                                                                                           "/")]
            if (record.fix and record.fix in heads and not branch_name_problem(record.fix)
                    and record.fix not in branches):
                branches.append(record.fix)
            self._fix_in_main(repo, full_name, slug, record.fix, installation_id, config.verify.fixes)
            for branch in branches:
                if branch == default_ref or repo.is_ancestor(heads[branch], default):
                    continue  # merged (or never diverged): measured against its parent above if `fix:` names it
                diff = fix_diff(repo, default, heads[branch])
                fix, new_head = fix_store.attach(
                    self.db, full_name, slug, branch, source="report" if branch == record.fix else "branch",
                    head_sha=heads[branch], base_sha=diff.base, stats=diff.stats,
                    token_delta=token_delta(list(diff.changes)))
                run_id = None
                if config.verify.fixes and new_head and fix.pr_number is None and \
                        not fix_store.has_run(self.db, full_name, slug, FIX, heads[branch]):
                    run_id = self.request_run(full_name, slug, base=diff.base, head=heads[branch], purpose=FIX,
                                              installation_id=installation_id)
                attached.append(Attached(fix, run_id))
        return attached

    def _fix_in_main(self, repo: GitRepository, full_name: str, slug: str, named: str | None,
                     installation_id: int | None, verify: bool) -> int | None:
        """A report whose `fix:` names a commit or branch already in main: its fix is measured against its own
        parent (what the fix itself gained), once per commit, and the record says so."""
        if not named or named.lower() in NOT_A_FIX or branch_name_problem(named):
            return None
        try:
            base, head, in_main = fix_refs(repo, named)
        except GitError:  # not in this clone (or not a commit): nothing to measure yet
            return None
        if not in_main or not verify or fix_store.has_run(self.db, full_name, slug, FIX, head):
            return None
        run_id = self.request_run(full_name, slug, base=base, head=head, purpose=FIX,
                                  installation_id=installation_id, options=RunOptions(in_main=True))
        log.info("%s: %s names %s, already in main: measured against its parent %s in bench run %s",
                 full_name, slug, named, base[:12], run_id)
        return run_id

    def merged_fixes(self, repo: GitRepository, full_name: str) -> list[fix_store.FixRow]:
        """Open fixes whose head is now part of the default branch: merged, with or without a pull request."""
        default = repo.resolve(repo.default_ref())
        merged = []
        for fix in fix_store.open_fixes(self.db, full_name):
            if fix.head_sha and repo.is_ancestor(fix.head_sha, default):
                fix_store.set_state(self.db, fix.id, fix_store.MERGED)
                merged.append(fix)
        return merged

    def verify_new_claims(self, repo: GitRepository, full_name: str, slugs: set[str],
                          installation_id: int | None) -> list[int]:
        """Verify on open: measure each new report's claim on the default branch, and again whenever its program,
        C translation, inputs or reference change there (a prose edit measures nothing)."""
        default = repo.resolve(repo.default_ref())
        config = _config(repo, default, full_name)
        if not slugs or not config.verify.on_open:
            return []
        records = fix_store.open_records(self.db, full_name)
        queued = []
        for slug in sorted(s for s in slugs if s in records):
            try:
                claim = claim_fingerprint(read_record(repo, slug, default, reading=config.reading))
            except UserError:
                continue  # not on the default branch (moved or deleted meanwhile): nothing to measure
            last = bench_store.last_options(self.db, full_name, slug, REPRODUCE)
            if last is not None and last.claim == claim:
                continue  # this very claim was measured already
            if last is None and records[slug].reproduced is not None:
                continue  # measured by hand (`perfbot verify`) before any queued run
            queued.append(self.request_run(full_name, slug, base=None, head=default, purpose=REPRODUCE,
                                           installation_id=installation_id, options=RunOptions(claim=claim)))
        return queued


NOT_A_FIX = ("inline", "unknown", "none")


def fix_refs(repo: GitRepository, ref: str, base: str | None = None) -> tuple[str, str, bool]:
    """(base, head, in main) of a fix named by a branch or commit. A fix already in main is measured against its
    first parent, so the run says what the fix itself gained; one not merged yet against the default branch."""
    head = repo.resolve(ref)
    default = repo.resolve(repo.default_ref())
    in_main = repo.is_ancestor(head, default)
    if base is not None:
        return repo.resolve(base), head, in_main
    if in_main:
        parent = repo.first_parent(head)
        if parent is not None:
            return parent, head, True
    return default, head, False


def _config(repo: GitRepository, sha: str, full_name: str) -> PerfbotFile:
    """A broken `.perfbot.toml` must not stop fixes being attached: they are then just not verified unasked."""
    try:
        return read_config(repo, sha)
    except UserError as exc:
        log.warning("%s: %s; fixes are attached but not verified until it is repaired", full_name, exc)
        return PerfbotFile(verify=Verify(fixes=False, on_open=False))
