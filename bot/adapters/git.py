"""Reading reports out of a git repository with GitPython: trees at a ref, never the working directory."""
from __future__ import annotations

import os
import re
import subprocess
import tempfile
from datetime import UTC, datetime
from pathlib import Path

import git

from bot.core.lint.checks import reserved_paths
from bot.core.reports.history import ADDED, DELETED, MODIFIED, RENAMED, CommitInfo, ReportChange
from bot.core.reports.records import REPORT_DIR, is_bot_writable, is_report_path, slug_of
from bot.core.tracker.refnames import branch_name_problem

_GITHUB_REMOTE = re.compile(r"github\.com[:/]+([A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+?)(?:\.git)?/?$")
_LOG_FORMAT = "%x1e%H%x1f%an%x1f%ae%x1f%ct%x1f%s"
RENAME_SIMILARITY = "70%"
_KINDS = {"A": ADDED, "M": MODIFIED, "T": MODIFIED, "D": DELETED, "R": RENAMED}


def local_full_name(path: Path) -> str:
    """The name a repository without a GitHub remote goes by in the store: local/<folder name>."""
    name = re.sub(r"[^A-Za-z0-9_.-]+", "-", Path(path).resolve().name).strip(".-")
    return f"local/{name or 'repo'}"


class GitError(Exception):
    """The repository or ref cannot be read; the message names it and says what to check."""


def _commit_info(commit: git.Commit) -> CommitInfo:
    return CommitInfo(
        sha=commit.hexsha,
        author_name=commit.author.name or "",
        author_email=commit.author.email or "",
        committed_at=datetime.fromtimestamp(commit.committed_date, tz=UTC),
        summary=str(commit.summary),
    )


class GitRepository:
    """One local repository (bare or not). Refs from users are validated before git sees them."""

    def __init__(self, path: str | Path, full_name: str | None = None) -> None:
        self.path = Path(path).resolve()
        self._full_name = full_name
        try:
            self.repo = git.Repo(self.path)
        except (git.InvalidGitRepositoryError, git.NoSuchPathError):
            raise GitError(f"{self.path} is not a git repository; pass --repo with the path of a clone") from None

    @classmethod
    def containing(cls, path: str | Path) -> GitRepository | None:
        """The repository a file or folder lives in, or None outside any repository."""
        try:
            repo = git.Repo(Path(path).resolve(), search_parent_directories=True)
        except (git.InvalidGitRepositoryError, git.NoSuchPathError):
            return None
        if repo.working_tree_dir is None:
            return None
        return cls(Path(repo.working_tree_dir))

    def slugs_ever(self) -> frozenset[str]:
        """Every report slug any branch of this repository has ever had (empty for a repo without commits)."""
        try:
            out = self.repo.git.log("--all", "--name-only", "--format=", "--", REPORT_DIR)
        except git.GitCommandError:
            return frozenset()
        return frozenset(filter(None, map(slug_of, out.split("\n"))))

    def close(self) -> None:
        self.repo.close()

    def commit_files(self, base: str, branch: str, files: dict[str, bytes | None], message: str,
                     author: tuple[str, str]) -> str:
        """Commit `files` (None deletes) on top of `base` as branch `branch`, without any working tree.

        A private index file keeps this safe in bare clones and beside a person's checkout alike.
        """
        problem = branch_name_problem(branch)
        if problem or any(not is_bot_writable(path) for path in files):
            raise GitError(f"refusing to write branch {branch!r}: {problem or 'only report files may change'}")
        name, email = author
        with tempfile.TemporaryDirectory(prefix="perfbot-index-") as tmp:
            # An empty scratch work tree: index commands insist on one, even in a bare clone.
            env = dict(os.environ, GIT_DIR=str(self.repo.git_dir), GIT_WORK_TREE=tmp,
                       GIT_INDEX_FILE=str(Path(tmp) / ".perfbot-index"), GIT_AUTHOR_NAME=name,
                       GIT_AUTHOR_EMAIL=email, GIT_COMMITTER_NAME=name, GIT_COMMITTER_EMAIL=email)
            self._git(["read-tree", base], env)
            for path, data in sorted(files.items()):
                if data is None:
                    self._git(["update-index", "--force-remove", "--", path], env)
                else:
                    blob = self._git(["hash-object", "-w", "--stdin"], env, data).strip()
                    self._git(["update-index", "--add", "--cacheinfo", f"100644,{blob},{path}"], env)
            tree = self._git(["write-tree"], env).strip()
            commit = self._git(["commit-tree", tree, "-p", base, "-m", message], env).strip()
            self._git(["update-ref", f"refs/heads/{branch}", commit], env)
        return commit

    def _git(self, args: list[str], env: dict, data: bytes | None = None) -> str:
        done = subprocess.run(["git", *args], cwd=self.repo.git_dir, env=env, input=data, capture_output=True,
                              timeout=60)
        if done.returncode != 0:
            raise GitError(f"git {args[0]} failed: {done.stderr.decode(errors='replace').strip()[:300]}")
        return done.stdout.decode()

    @property
    def full_name(self) -> str:
        """The repository's name in the store: owner/name for a GitHub remote, else local/<folder name>."""
        if self._full_name:
            return self._full_name
        try:
            url = self.repo.remotes.origin.url
        except (AttributeError, IndexError, ValueError):
            url = ""
        match = _GITHUB_REMOTE.search(url)
        return match.group(1) if match else local_full_name(self.path)

    def resolve(self, ref: str) -> str:
        if not ref or ref.startswith("-") or any(ch.isspace() or ord(ch) < 32 for ch in ref):
            raise GitError(f"{ref!r} is not a valid ref; give a branch, tag or commit sha")
        try:
            return self.repo.git.rev_parse("--verify", "--quiet", "--end-of-options", f"{ref}^{{commit}}")
        except git.GitCommandError:
            raise GitError(f"ref {ref!r} does not name a commit in {self.path}") from None

    def default_ref(self) -> str:
        try:
            return self.repo.head.reference.name
        except TypeError:  # detached HEAD
            return "HEAD"
        except ValueError:
            raise GitError(f"{self.path} has no commits yet") from None

    def has_commit(self, sha: str) -> bool:
        """Whether a full commit sha is in this clone (a force-pushed-away commit may never have been fetched)."""
        if not re.fullmatch(r"[0-9a-f]{40}", sha):
            return False
        try:
            self.repo.git.cat_file("-e", f"{sha}^{{commit}}")
        except git.GitCommandError:
            return False
        return True

    def is_ancestor(self, older: str, newer: str) -> bool:
        try:
            return self.repo.is_ancestor(older, newer)  # type: ignore[arg-type]  # takes any rev, not just a Commit
        except git.GitCommandError:
            return False  # the older commit is gone (force-push, gc): treat as unrelated

    def commit(self, sha: str) -> CommitInfo:
        return _commit_info(self.repo.commit(sha))

    def read_file(self, sha: str, path: str) -> bytes | None:
        """A file's content in the tree at `sha`, or None when it is not there."""
        try:
            return (self.repo.commit(sha).tree / path).data_stream.read()
        except KeyError:
            return None

    def first_parent(self, sha: str) -> str | None:
        parents = self.repo.commit(sha).parents
        return parents[0].hexsha if parents else None

    def first_parent_commits(self, since: str | None, until: str) -> list[CommitInfo]:
        """Commits after `since` up to `until` along the first-parent line, oldest first."""
        spec = f"{since}..{until}" if since else until
        return [_commit_info(c) for c in reversed(list(self.repo.iter_commits(spec, first_parent=True)))]

    def introduced(self, text: str, since: str, until: str) -> CommitInfo | None:
        """The oldest commit after `since` up to `until` whose change adds or drops `text` (`git log -S`)."""
        try:
            found = self.repo.git.log("-S", text, "--reverse", "--format=%H", f"{since}..{until}", "--").split()
        except git.GitCommandError:
            return None
        return self.commit(found[0]) if found else None

    def bisect_range(self, good: str, bad: str) -> list[CommitInfo]:
        """The first-parent line from the passing end to `bad`, oldest first. When `good` sits off that line (a
        fix merged by a merge commit), the passing end is the line's first commit that contains it: the commits
        before the merge never had the fix and would be blamed for its absence."""
        if not self.is_ancestor(good, bad):
            raise GitError(f"{good[:12]} is not an ancestor of {bad[:12]}: a bisection needs an older passing "
                           "commit and a newer failing one")
        line = [c for c in reversed(list(self.repo.iter_commits(f"{good}..{bad}", first_parent=True)))]
        if not line:
            return [self.commit(good)]
        if line[0].parents and line[0].parents[0].hexsha == good:
            return [self.commit(good), *(_commit_info(c) for c in line)]
        low, high = 0, len(line) - 1  # descendants of `good` form the line's newer part: find where it starts
        while low < high:
            middle = (low + high) // 2
            if self.is_ancestor(good, line[middle].hexsha):
                high = middle
            else:
                low = middle + 1
        return [_commit_info(c) for c in line[low:]]

    def changes(self, sha: str, parent: str | None) -> tuple[list[ReportChange], list[str]]:
        """Report changes between `parent` (None: the empty tree) and `sha`, and other paths it ignored."""
        if parent is None:
            return self.snapshot(sha)  # a root commit adds everything in its tree
        # Reports share a template, so git's default 50% similarity would pair unrelated reports as renames.
        diffs = self.repo.commit(parent).diff(self.repo.commit(sha), paths=REPORT_DIR, find_renames=RENAME_SIMILARITY)
        changes: list[ReportChange] = []
        ignored: list[str] = []
        for diff in diffs:
            kind = _KINDS.get(diff.change_type[0]) if diff.change_type else None
            new_path, old_path = diff.b_path or "", diff.a_path or ""
            if kind is None:
                continue
            if kind == RENAMED and not is_report_path(old_path):
                kind = ADDED  # a file moved into the report namespace is a new report
            if kind == RENAMED and not is_report_path(new_path):
                kind, new_path = DELETED, old_path  # moved out: the report is gone
            path = old_path if kind == DELETED else new_path
            if not is_report_path(path):
                ignored.append(path)
                continue
            data = diff.b_blob.data_stream.read() if kind != DELETED and diff.b_blob else None
            changes.append(ReportChange(kind, path, old_path if kind == RENAMED else None, data))
        return changes, ignored

    def reserved_paths(self, sha: str) -> tuple[str, ...]:
        """The tree's paths under a name perfbot reserves (.perfbot-run, ...), at most lint's RESERVED_SHOWN."""
        try:
            listed = self.repo.git.ls_tree("-r", "--name-only", "-z", "--full-tree", sha)
        except git.GitCommandError:  # a commit this clone no longer has (a force push): no tree to name
            return ()
        return reserved_paths(p for p in listed.split("\0") if p)

    def snapshot(self, sha: str) -> tuple[list[ReportChange], list[str]]:
        """Every report in the tree at `sha` as an addition, and the other files under devs/issues."""
        try:
            folder = self.repo.commit(sha).tree / REPORT_DIR
        except KeyError:
            return [], []
        reports: list[ReportChange] = []
        ignored: list[str] = []
        for blob in folder.traverse():
            if not isinstance(blob, git.Blob):
                continue
            path = str(blob.path)  # a tree's paths are str; the stubs allow any PathLike
            if is_report_path(path):
                reports.append(ReportChange(ADDED, path, None, blob.data_stream.read()))
            else:
                ignored.append(path)
        return reports, ignored

    def report_history(self, sha: str) -> tuple[dict[str, CommitInfo], frozenset[str]]:
        """One git log pass: the commit that last changed each report path, and every slug ever present."""
        out = self.repo.git.log(
            "--first-parent", "--diff-merges=first-parent", "--name-only", f"--format={_LOG_FORMAT}", sha, "--",
            REPORT_DIR
        )
        touches: dict[str, CommitInfo] = {}
        for entry in out.split("\x1e")[1:]:
            header, _, names = entry.partition("\n")
            commit_sha, name, email, stamp, summary = header.split("\x1f", 4)
            info = CommitInfo(commit_sha, name, email, datetime.fromtimestamp(int(stamp), tz=UTC), summary)
            for path in names.split("\n"):
                if is_report_path(path):
                    touches.setdefault(path, info)
        return touches, frozenset(filter(None, map(slug_of, touches)))
