"""What `init` and `check` read in a built workspace on this machine: the programs its build made and its C
sources. A bench host's workspace is not read here (only its runner reaches it): both answer empty."""
from __future__ import annotations

from pathlib import Path

_NOT_MADE = frozenset({".git", "CMakeFiles"})  # CMake's compiler probes are ELF files too
_DEPTH = 4


def readable(workspace) -> bool:
    return isinstance(workspace, Path) and workspace.is_dir()


def programs(workspace, repository: Path | None = None) -> list[str]:
    """ELF files the build made, relative to the workspace; not those `repository` holds at the same path."""
    if not readable(workspace):
        return []
    made = []
    for path in sorted(workspace.rglob("*")):
        relative = path.relative_to(workspace)
        if len(relative.parts) <= _DEPTH and not (_NOT_MADE & set(relative.parts)) and is_program(path) \
                and not (repository is not None and (repository / relative).exists()):
            made.append(str(relative))
    return made


def sources(workspace) -> dict[str, str]:
    """The C sources and headers of a workspace, by path."""
    if not readable(workspace):
        return {}
    found = {}
    for path in sorted(workspace.rglob("*.[ch]"))[:200]:
        if ".git" not in path.parts and path.stat().st_size < 2_000_000:
            found[str(path.relative_to(workspace))] = path.read_text(encoding="utf-8", errors="replace")
    return found


def is_program(path: Path) -> bool:
    try:
        with path.open("rb") as handle:
            return path.is_file() and handle.read(4) == b"\x7fELF"
    except OSError:
        return False
