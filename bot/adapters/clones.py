"""Bare clones of watched GitHub repositories in the instance folder, fetched with the installation token."""
from __future__ import annotations

import base64
import os
import re
import threading
from pathlib import Path

import git

from bot.errors import CredentialsRejected, Invalid, NotAllowed, TransientError

_FULL_NAME = re.compile(r"[A-Za-z0-9_.-]{1,100}/[A-Za-z0-9_.-]{1,100}")
# What git says when the remote answered and refused: retrying cannot help (GitHub's 404 for a repository it does
# not have or will not show, 403, a missing local remote, a server that wants credentials git does not have).
_GONE = re.compile(r"repository not found|repository '[^']*' not found|does not appear to be a git repository"
                   r"|returned error: 40[34]|could not read username|permission to \S+ denied", re.I)
_REFUSED = re.compile(r"authentication failed|invalid username or (?:password|token)|returned error: 401", re.I)


class RepositoryUnavailable(Exception):
    """The repository cannot be fetched at all (gone, renamed, private to perfbot): a permanent failure."""


class Clones:
    """One bare clone per repository; fetching replaces every branch with the remote's."""

    def __init__(self, root: Path, git_base_url: str) -> None:
        self.root = root
        self.git_base_url = git_base_url.rstrip("/")
        self._locks: dict[str, threading.Lock] = {}
        self._guard = threading.Lock()

    def path_for(self, full_name: str) -> Path:
        if not _FULL_NAME.fullmatch(full_name) or any(p.strip(".") == "" for p in full_name.split("/")):
            raise Invalid(f"not a repository name: {full_name[:120]!r}")
        path = (self.root / f"{full_name}.git").resolve()
        if self.root.resolve() not in path.parents:
            raise NotAllowed(f"repository name escapes the clone folder: {full_name!r}", rule="the clone folder")
        return path

    def fetch(self, full_name: str, token: str | None = None) -> Path:
        path = self.path_for(full_name)
        with self._guard:
            lock = self._locks.setdefault(full_name, threading.Lock())
        with lock:
            repo = git.Repo(path) if (path / "HEAD").exists() else git.Repo.init(path, bare=True, mkdir=True)
            url = f"{self.git_base_url}/{full_name}.git"
            if "origin" not in [r.name for r in repo.remotes]:
                repo.create_remote("origin", url)
            elif repo.remotes.origin.url != url:
                repo.remotes.origin.set_url(url)
            env = _auth_env(url, token)
            try:
                # Pull request heads too: a fork's commits live only there, and a maintainer may ask to measure them.
                repo.git.execute(["git", "fetch", "--prune", "--no-tags", "origin", "+refs/heads/*:refs/heads/*",
                                  "+refs/pull/*/head:refs/pull/*/head"], env=env)
                default = self._remote_default(repo, env)
                if default:
                    repo.git.symbolic_ref("HEAD", f"refs/heads/{default}")
            except git.GitCommandError as exc:
                raise fetch_error(full_name, url, exc, token is not None) from None
            finally:
                repo.close()
        return path

    def push(self, full_name: str, branch: str, token: str | None = None) -> None:
        """Publish a bot branch (never the default branch: callers only ever name perfbot/... branches)."""
        path = self.path_for(full_name)
        if not branch.startswith("perfbot/"):
            raise NotAllowed(f"perfbot only pushes its own perfbot/... branches, not {branch!r}",
                             rule="perfbot's own branches")
        repo = git.Repo(path)
        try:
            env = _auth_env(repo.remotes.origin.url, token)
            repo.git.execute(["git", "push", "--force", "origin", f"refs/heads/{branch}:refs/heads/{branch}"], env=env)
        except git.GitCommandError as exc:
            raise TransientError(f"pushing {branch} to {full_name} failed (exit {exc.status})") from None
        finally:
            repo.close()

    @staticmethod
    def _remote_default(repo: git.Repo, env: dict) -> str | None:
        out = repo.git.execute(["git", "ls-remote", "--symref", "origin", "HEAD"], env=env)
        match = re.search(r"^ref: refs/heads/(\S+)\s+HEAD", out, re.M)
        return match.group(1) if match else None


def fetch_error(full_name: str, url: str, exc: git.GitCommandError, with_token: bool) -> Exception:
    """A refused fetch is permanent and says what to check; anything else (network, a 5xx) is transient."""
    said = re.sub(r"^\s*stderr: '|'$", "", exc.stderr if isinstance(exc.stderr, str) else "")
    # git's own verdict (fatal:) and the server's words (remote:), e.g. "Repository not found."
    lines = [text.strip() for text in said.splitlines()]
    verdict = next((text for text in lines if text.startswith(("fatal:", "error:"))), None)
    server = next((text for text in lines if text.startswith("remote:")), None)
    line = "; ".join(text for text in (verdict, server) if text)[:400] or f"exit {exc.status}"
    if with_token and _REFUSED.search(said):
        return CredentialsRejected(f"fetching {full_name}: GitHub refused perfbot's token ({line})")
    if _GONE.search(said) or _REFUSED.search(said):
        return RepositoryUnavailable(
            f"cannot fetch {full_name} from {url}: the repository does not exist or perfbot may not read it "
            f"({line}). Check the name and that the GitHub App is installed on it (or the token can read it), "
            "then redeliver; perfbot does not retry this by itself.")
    return TransientError(f"fetching {full_name} failed ({line})")


def _auth_env(url: str, token: str | None) -> dict:
    env = dict(os.environ, GIT_TERMINAL_PROMPT="0")
    if token and url.startswith("https://"):
        # Through the environment, so the token never appears in a process list or a log line.
        basic = base64.b64encode(f"x-access-token:{token}".encode()).decode()
        env.update(GIT_CONFIG_COUNT="1", GIT_CONFIG_KEY_0="http.extraHeader",
                   GIT_CONFIG_VALUE_0=f"Authorization: Basic {basic}")
    return env
