"""git check-ref-format rules for branch names, each failure described so a person can fix it."""
from __future__ import annotations

import re

PROTECTED_BRANCHES = ("main", "master", "HEAD")
COMMIT_SHA = re.compile(r"[0-9a-fA-F]{7,40}")
_FORBIDDEN_CHARS = set(" ~^:?*[\\")


def branch_name_problem(name: str) -> str | None:
    """Why `name` is not a valid git branch name (git check-ref-format --branch), or None when it is."""
    if not name:
        return "it is empty"
    if name == "@":
        return "'@' alone is not a branch name"
    if name.startswith("-"):
        return "it starts with '-'"
    if name.startswith("/") or name.endswith("/"):
        return "it starts or ends with '/'"
    if "//" in name:
        return "it contains '//'"
    if ".." in name:
        return "it contains '..'"
    if "@{" in name:
        return "it contains '@{'"
    for char in name:
        if ord(char) < 0x20 or ord(char) == 0x7F:
            return f"it contains the control character {char!r}"
        if char in _FORBIDDEN_CHARS:
            return "it contains a space" if char == " " else f"it contains '{char}'"
    if name.endswith("."):
        return "it ends with '.'"
    for component in name.split("/"):
        if component.startswith("."):
            return f"the part '{component}' starts with '.'"
        if component.endswith(".lock"):
            return f"the part '{component}' ends with '.lock'"
    return None


def protected_branch(name: str) -> str | None:
    """The protected branch `name` points at (main, master, HEAD), also as refs/heads/… or origin/…."""
    short = re.sub(r"^(?:refs/heads/|refs/remotes/[^/]+/|origin/)", "", name)
    return short if short in PROTECTED_BRANCHES else None


def suggest_branch_name(name: str) -> str:
    """A valid branch name close to `name`, for the remedy text."""
    cleaned = re.sub(r"[\x00-\x20\x7f~^:?*\[\\]+", "-", name)
    cleaned = re.sub(r"\.{2,}", ".", cleaned.replace("@{", "-"))
    cleaned = re.sub(r"/{2,}", "/", cleaned)
    parts = [part.lstrip(".").removesuffix(".lock") for part in cleaned.strip("/").split("/")]
    cleaned = "/".join(part for part in parts if part).strip("-.").rstrip(".")
    if not cleaned or cleaned == "@" or protected_branch(cleaned):
        return "fix/<short-description>"
    candidate = cleaned if cleaned.startswith("fix/") else f"fix/{cleaned}"
    return candidate if branch_name_problem(candidate) is None else "fix/<short-description>"
