"""Where a reference implementation's commits come from: this project's clone, another local clone, or a URL
mirrored next to the project's own git data and fetched before each use."""
from __future__ import annotations

import hashlib
import re
from pathlib import Path

import git

from bot.adapters.git import GitError, GitRepository
from bot.errors import UserError

_URL = re.compile(r"(?:https?|ssh|git|file)://\S+|[A-Za-z0-9_.-]+@[A-Za-z0-9_.-]+:\S+")


def reference_repository(repository: str | None, project: Path, name: str) -> Path:
    """A local git folder holding the reference's commits; `repository` relative paths start at the project."""
    if repository is None:
        return Path(project)
    if _URL.fullmatch(repository):
        return _mirror(repository, Path(project), name)
    path = (Path(project) / repository).resolve()
    if not (path / ".git").exists() and not (path / "HEAD").is_file():
        raise UserError(f"[references.{name}] repository {repository!r} is not a git repository at {path}; give a "
                        "clone's path (relative to the project) or a URL")
    return path


def resolve_in(path: Path, ref: str | None, name: str) -> str:
    """The commit `ref` names there (its HEAD when None); a remote-tracking origin/<ref> counts too."""
    repo = GitRepository(path)
    try:
        for candidate in ([ref, f"origin/{ref}"] if ref else ["HEAD"]):
            try:
                return repo.resolve(candidate)
            except GitError as exc:
                problem = str(exc)
        raise UserError(f"reference {name}: {problem}; push the branch or fix the ref")
    finally:
        repo.close()


def _mirror(url: str, project: Path, name: str) -> Path:
    project_repo = git.Repo(project)
    try:
        folder = Path(project_repo.git_dir) / "perfbot-references" / hashlib.sha256(url.encode()).hexdigest()[:16]
    finally:
        project_repo.close()
    try:
        if folder.exists():
            git.Repo(folder).git.fetch("--prune", "--", "origin")
        else:
            git.Repo.clone_from(url, folder, mirror=True)
    except git.GitCommandError as exc:
        raise UserError(f"[references.{name}] cannot fetch {url}: {exc.stderr.strip()[-300:]}") from None
    return folder
