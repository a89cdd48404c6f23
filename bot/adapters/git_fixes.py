"""What a fix branch changes, read from git: its branches, merge base, diff stats and changed source files."""
from __future__ import annotations

from dataclasses import dataclass

import git

from bot.adapters.git import GitRepository
from bot.core.tracker.refnames import branch_name_problem

# Beyond this a "fix" is a rewrite; its token delta is still counted, but from the first files only.
MAX_FILES_LEXED = 200
MAX_FILE_BYTES = 1_000_000


@dataclass(frozen=True)
class FixDiff:
    base: str  # the merge base the fix branched from
    head: str
    additions: int
    deletions: int
    changed_files: int
    changes: tuple[tuple[str, str | None, str | None], ...]  # (path, before, after) of text files

    @property
    def stats(self) -> tuple[int, int, int]:
        return self.additions, self.deletions, self.changed_files


def branch_heads(repo: GitRepository, prefix: str = "") -> dict[str, str]:
    """Branch name -> head sha, for branches whose names are safe to use (hostile names are skipped)."""
    heads = {}
    for ref in repo.repo.references:
        if isinstance(ref, git.Head) or ref.path.startswith("refs/heads/"):
            name = ref.path[len("refs/heads/"):]
            if name.startswith(prefix) and not branch_name_problem(name):
                heads[name] = ref.commit.hexsha
    return heads


def merge_base(repo: GitRepository, a: str, b: str) -> str | None:
    found = repo.repo.merge_base(a, b)
    return found[0].hexsha if found else None


def fix_diff(repo: GitRepository, default_sha: str, head: str) -> FixDiff:
    """The fix as its PR shows it: from the merge base with the default branch to its head."""
    base = merge_base(repo, default_sha, head) or default_sha
    numstat = repo.repo.git.diff("--numstat", "--no-renames", base, head, "--")
    additions = deletions = files = 0
    paths = []
    for line in numstat.splitlines():
        added, removed, path = line.split("\t", 2)
        files += 1
        if added != "-":  # binary files count as changed, with no lines
            additions, deletions = additions + int(added), deletions + int(removed)
            paths.append(path)
    changes = tuple((path, _text(repo, base, path), _text(repo, head, path)) for path in paths[:MAX_FILES_LEXED])
    return FixDiff(base, head, additions, deletions, files, changes)


def _text(repo: GitRepository, sha: str, path: str) -> str | None:
    data = repo.read_file(sha, path)
    if data is None or len(data) > MAX_FILE_BYTES:
        return None
    return data.decode("utf-8", "replace")
