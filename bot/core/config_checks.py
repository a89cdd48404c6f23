"""The checks every `.perfbot.toml` section shares: one error type naming key and line, and value kinds."""
from __future__ import annotations

import difflib
import re

PLACEHOLDERS = frozenset({"file", "threads", "out", "input"})
BUILD_PLACEHOLDERS = frozenset({"checkout", "sha", "script"})  # [build] command: see build_config.py
_PLACEHOLDER = re.compile(r"\{([^{}]*)\}")


def fill(template: tuple[str, ...], **values: str) -> list[str]:
    """Placeholders filled by plain substitution: each stays one argument whatever its text (never a shell)."""
    out = []
    for arg in template:
        for key, value in values.items():
            arg = arg.replace("{" + key + "}", value)
        out.append(arg)
    return out
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,62}")
_HOST = re.compile(r"[A-Za-z0-9][A-Za-z0-9.-]{0,252}")
_USER = re.compile(r"[a-z_][a-z0-9_-]{0,31}")
_WORKFLOW = re.compile(r"[A-Za-z0-9_.-]{1,100}\.ya?ml")
# A file of the repository named in the config: read from git and written on a bench host, so plain parts.
_REPO_FILE = re.compile(r"[A-Za-z0-9_.-]{1,100}(?:/[A-Za-z0-9_.-]{1,100}){0,15}")
# A remote folder reaches the bench host's shell (always quoted): absolute or under the remote home, plain
# characters only, and never climbing out with `..`.
REMOTE_PATH_RE = re.compile(r"(?:/|~/)[A-Za-z0-9_.~-][A-Za-z0-9_./~-]{0,200}")


class ConfigFileError(ValueError):
    """What is wrong, where: `.perfbot.toml:LINE: key: problem`."""

    def __init__(self, key: str, line: int, problem: str) -> None:
        super().__init__(f".perfbot.toml:{line}: {key}: {problem}")
        self.key, self.line, self.problem = key, line, problem


def check(key: str, value, kind, line: int):
    fail = lambda problem: ConfigFileError(key, line, problem)  # noqa: E731
    if isinstance(kind, tuple):
        if value not in kind:
            raise fail(f"{value!r} is not one of {', '.join(kind)}")
        return value
    if kind in ("argv", "build_argv"):
        if not isinstance(value, list) or not value or not all(isinstance(v, str) and v for v in value):
            raise fail('must be a list of arguments, e.g. ["gcc", "-O2", "{file}"] (no shell strings)')
        allowed = PLACEHOLDERS if kind == "argv" else BUILD_PLACEHOLDERS
        for arg in value:
            unknown = {p for p in _PLACEHOLDER.findall(arg)} - allowed
            if unknown:
                hint = "{file}, {threads}, {input} or {out}" if kind == "argv" else "{checkout}, {sha} or {script}"
                raise fail(f"unknown placeholder {{{sorted(unknown)[0]}}}; use {hint}")
        return tuple(value)
    if kind == "repo_file":
        if not isinstance(value, str) or not _REPO_FILE.fullmatch(value) or \
                {".", ".."} & set(value.split("/")):
            raise fail(f"{str(value)[:60]!r} must be a path inside the repository, e.g. \".perfbot/build.sh\" "
                       "(letters, digits and _.- between slashes, no leading / and no '..')")
        return value
    if kind == "flag":
        if not isinstance(value, bool):
            raise fail(f"{value!r} must be true or false")
        return value
    if kind in ("count", "port"):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1 or (kind == "port" and value > 65535):
            raise fail(f"{value!r} must be a positive whole number")
        return value
    if kind in ("positive", "fraction"):
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0 or (kind == "fraction" and value > 1):
            raise fail(f"{value!r} must be a number {'in (0, 1]' if kind == 'fraction' else 'above 0'}")
        return float(value)
    if kind == "remote_path":
        if not isinstance(value, str) or not remote_path_ok(value):
            raise fail(f"{str(value)[:60]!r} must be an absolute or ~/ folder of letters, digits and _./~- "
                       "without '..'")
        return value
    if kind == "runs_on":  # each label reaches a workflow input: plain names only
        if not isinstance(value, list) or not value or not all(isinstance(v, str) and _NAME.fullmatch(v) for v in value):
            raise fail("must list runner labels of letters, digits and _.-, e.g. [\"self-hosted\", \"cuda\"]")
        return tuple(value)
    patterns = {"name": _NAME, "host": _HOST, "user": _USER, "workflow": _WORKFLOW}
    if kind in patterns:
        if not isinstance(value, str) or not patterns[kind].fullmatch(value):
            raise fail(f"{str(value)[:60]!r} is not a valid {kind}")
        return value
    if kind == "labels":
        if not isinstance(value, list) or not all(v in ("c", "metal", "cuda") for v in value) or not value:
            raise fail('must list backends among "c", "metal", "cuda"')
        return tuple(value)
    raise AssertionError(kind)


def remote_path_ok(value: str) -> bool:
    return bool(REMOTE_PATH_RE.fullmatch(value)) and ".." not in value.split("/")


def table_values(section: str, table, lines: list[str], keys: dict, value) -> dict | None:
    """A plain `[section]` table checked key by key: `value(key, value, kind, line)` checks each value."""
    if table is None:
        return None
    if not isinstance(table, dict):
        raise ConfigFileError(section, line_of(lines, section), f"must be a table: write it as [{section}]")
    checked = {}
    for key, item in table.items():
        kind = keys.get(key)
        if kind is None:
            raise ConfigFileError(f"{section}.{key}", line_of(lines, key), f"unknown key{suggest(key, keys)}")
        checked[key] = value(f"{section}.{key}", item, kind, line_of(lines, key))
    return checked


def line_of(lines: list[str], key: str) -> int:
    pattern = re.compile(rf"^\s*(\[\[?\s*{re.escape(key)}\s*\]\]?|{re.escape(key)}\s*=)")
    return next((n for n, line in enumerate(lines, 1) if pattern.match(line)), 1)


def suggest(key: str, known) -> str:
    close = difflib.get_close_matches(key, list(known), n=1)
    return f"; did you mean {close[0]!r}?" if close else f"; known: {', '.join(sorted(known))}"
