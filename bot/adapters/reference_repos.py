"""Where a reference implementation's commits come from: this project's clone, or a URL the operator allows,
mirrored next to the project's own git data and fetched before each use. Never a path: `.perfbot.toml` is the
repository's, and a path would read another installation's clone on the bot host."""
from __future__ import annotations

import hashlib
from pathlib import Path

import git

from bot.adapters.git import GitError, GitRepository
from bot.core.config.instance import source_allowed
from bot.errors import NotAllowed, NotFound, Unreachable


def reference_repository(repository: str | None, project: Path, name: str, allowed: tuple[str, ...]) -> Path:
    """A local git folder holding the reference's commits: the project's own, or a mirror of an allowed URL."""
    if repository is None:
        return Path(project)
    if not source_allowed(repository, allowed):
        raise NotAllowed(f"[references.{name}] repository {repository[:100]!r} is not a source the operator allows",
                         "leave repository out to compare with a branch of this repository, or ask the operator to "
                         "allow its URL ([references] allow in the instance file)", rule="[references] allow")
    return _mirror(repository, Path(project), name)


def resolve_in(path: Path, ref: str | None, name: str) -> str:
    """The commit `ref` names there (its HEAD when None); a remote-tracking origin/<ref> counts too."""
    repo = GitRepository(path)
    try:
        for candidate in ([ref, f"origin/{ref}"] if ref else ["HEAD"]):
            try:
                return repo.resolve(candidate)
            except GitError as exc:
                problem = str(exc)
        raise NotFound(f"reference {name}: {problem}", "push the branch or fix the ref", name=ref or "HEAD")
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
    except git.GitCommandError as exc:  # git names the mirror's folder: the instance's layout is not for posting
        said = exc.stderr.strip().replace(str(folder), "the reference's mirror").replace(str(project), "the clone")
        raise Unreachable(f"[references.{name}] cannot fetch it: {said[-300:]}", host=url) from None
    return folder
