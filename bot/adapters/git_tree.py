"""Text files of one commit's tree, chosen by path, and the files a change renamed: what the parity guard reads
at a base and a head."""
from __future__ import annotations

from collections.abc import Callable

from git import Blob

from bot.adapters.git import GitRepository

MAX_FILE_BYTES = 1_000_000  # a generated or vendored file this large is not hand-kept paired code
MAX_FILES = 500


def text_files(repo: GitRepository, sha: str, wanted: Callable[[str], bool]) -> dict[str, str]:
    """path -> text of every blob at `sha` whose path `wanted` accepts (binary and huge files left out)."""
    out: dict[str, str] = {}
    for item in repo.repo.commit(sha).tree.traverse():
        if not isinstance(item, Blob):
            continue
        path = str(item.path)  # a tree's paths are str; the stubs allow any PathLike
        if not wanted(path) or item.size > MAX_FILE_BYTES:
            continue
        data = item.data_stream.read()
        if b"\0" in data[:8000]:
            continue
        out[path] = data.decode("utf-8", "replace")
        if len(out) >= MAX_FILES:
            break
    return out


def renamed_files(repo: GitRepository, base: str, head: str) -> dict[str, str]:
    """old path -> new path for the files git sees renamed between the two commits (50% similarity)."""
    out = repo.repo.git.diff("--name-status", "-M50%", "-z", base, head, "--")
    fields, renames, index = out.split("\0"), {}, 0
    while index < len(fields) and fields[index]:
        status = fields[index]
        if status.startswith(("R", "C")):
            if status.startswith("R"):
                renames[fields[index + 1]] = fields[index + 2]
            index += 3
        else:
            index += 2
    return renames
