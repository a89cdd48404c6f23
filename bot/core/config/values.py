"""The kinds of value `.perfbot.toml` holds, as constrained types: each check says what is wrong in the file's words.

Every type is `Annotated[python type, BeforeValidator(check)]`: the check sees the TOML value as written (so a
`true` is never taken for 1, nor `"5"` for 5), raises ValueError with the message a person reads, and returns
the value the runtime uses (tuples for lists). The python type is what the JSON Schema shows.
"""
from __future__ import annotations

import re
from collections.abc import Callable
from datetime import date
from typing import Annotated, Literal, Self

from pydantic import BaseModel, BeforeValidator, ConfigDict, PrivateAttr

PLACEHOLDERS = frozenset({"file", "threads", "out", "input"})
BUILD_PLACEHOLDERS = frozenset({"checkout", "sha", "script"})
_PLACEHOLDER = re.compile(r"\{([^{}]*)\}")
NAME_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,62}")
_HOST = re.compile(r"[A-Za-z0-9][A-Za-z0-9.-]{0,252}")
_USER = re.compile(r"[a-z_][a-z0-9_-]{0,31}")
_WORKFLOW = re.compile(r"[A-Za-z0-9_.-]{1,100}\.ya?ml")
# A file of the repository named in the config: read from git and written on a bench host, so plain parts.
_REPO_FILE = re.compile(r"[A-Za-z0-9_.-]{1,100}(?:/[A-Za-z0-9_.-]{1,100}){0,15}")
# A remote folder reaches the bench host's shell (always quoted): absolute or under the remote home, plain
# characters only, and never climbing out with `..`.
Check = Callable[[object], object]  # a BeforeValidator: the TOML value as written in, the checked value out
REMOTE_PATH_RE = re.compile(r"(?:/|~/)[A-Za-z0-9_.~-][A-Za-z0-9_./~-]{0,200}")


def _shown(value: object, size: int = 60) -> str:
    return repr(str(value)[:size])


def argv_of(allowed: frozenset[str], hint: str) -> Check:
    def check(value: object) -> tuple[str, ...]:
        if not isinstance(value, (list, tuple)) or not value or not all(isinstance(v, str) and v for v in value):
            raise ValueError('must be a list of arguments, e.g. ["gcc", "-O2", "{file}"] (no shell strings)')
        for arg in value:
            unknown = set(_PLACEHOLDER.findall(arg)) - allowed
            if unknown:
                raise ValueError(f"unknown placeholder {{{sorted(unknown)[0]}}}; use {hint}")
        return tuple(value)
    return check


def choice(*options: str) -> Check:
    def check(value: object) -> object:
        if value not in options:
            raise ValueError(f"{value!r} is not one of {', '.join(options)}")
        return value
    return check


def flag(value: object) -> bool:
    if not isinstance(value, bool):
        raise ValueError(f"{value!r} must be true or false")
    return value


def whole(low: int = 1, high: int | None = None, what: str = "a positive whole number") -> Check:
    def check(value: object) -> int:
        if isinstance(value, bool) or not isinstance(value, int) or value < low or (high is not None and value > high):
            raise ValueError(f"{value!r} must be {what}")
        return value
    return check


def number(high: float | None = None) -> Check:
    def check(value: object) -> float:
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0 or (high and value > high):
            raise ValueError(f"{value!r} must be a number {'in (0, 1]' if high else 'above 0'}")
        return float(value)
    return check


def matching(pattern: re.Pattern, what: str) -> Check:
    def check(value: object) -> str:
        if not isinstance(value, str) or not pattern.fullmatch(value):
            raise ValueError(f"{_shown(value)} is not a valid {what}")
        return value
    return check


def remote_path_ok(value: str) -> bool:
    return bool(REMOTE_PATH_RE.fullmatch(value)) and ".." not in value.split("/")


def _remote_path(value: object) -> str:
    if not isinstance(value, str) or not remote_path_ok(value):
        raise ValueError(f"{_shown(value)} must be an absolute or ~/ folder of letters, digits and _./~- without '..'")
    return value


def _repo_file(value: object) -> str:
    if not isinstance(value, str) or not _REPO_FILE.fullmatch(value) or {".", ".."} & set(value.split("/")):
        raise ValueError(f"{_shown(value)} must be a path inside the repository, e.g. \".perfbot/build.sh\" "
                         "(letters, digits and _.- between slashes, no leading / and no '..')")
    return value


def _labels(value: object) -> tuple[object, ...]:
    if not isinstance(value, (list, tuple)) or not value or not all(v in ("c", "metal", "cuda") for v in value):
        raise ValueError('must list backends among "c", "metal", "cuda"')
    return tuple(value)


def _runs_on(value: object) -> tuple[str, ...]:  # each label reaches a workflow input: plain names only
    if not isinstance(value, (list, tuple)) or not value or \
            not all(isinstance(v, str) and NAME_RE.fullmatch(v) for v in value):
        raise ValueError('must list runner labels of letters, digits and _.-, e.g. ["self-hosted", "cuda"]')
    return tuple(value)


def _title(value: object) -> str:
    if not isinstance(value, str) or not value.strip() or len(value) > 80 or not value.isprintable():
        raise ValueError("must be a one-line name of at most 80 characters")
    return value.strip()


def _day(value: object) -> date:
    if type(value) is not date:  # a TOML datetime is a date too, but a milestone is due on a day
        raise ValueError(f"{_shown(value, 40)} must be a TOML date such as 2026-12-31 (no quotes, no time)")
    return value


Argv = Annotated[tuple[str, ...], BeforeValidator(argv_of(PLACEHOLDERS, "{file}, {threads}, {input} or {out}"))]
BuildArgv = Annotated[tuple[str, ...], BeforeValidator(argv_of(BUILD_PLACEHOLDERS, "{checkout}, {sha} or {script}"))]
Flag = Annotated[bool, BeforeValidator(flag)]
Count = Annotated[int, BeforeValidator(whole())]
Port = Annotated[int, BeforeValidator(whole(1, 65535))]
Minutes = Annotated[int, BeforeValidator(whole(0, 24 * 60, "a whole number of minutes from 0 to 1440"))]
Positive = Annotated[float, BeforeValidator(number())]
Fraction = Annotated[float, BeforeValidator(number(1.0))]
Name = Annotated[str, BeforeValidator(matching(NAME_RE, "name"))]
Host = Annotated[str, BeforeValidator(matching(_HOST, "host"))]
User = Annotated[str, BeforeValidator(matching(_USER, "user"))]
Workflow = Annotated[str, BeforeValidator(matching(_WORKFLOW, "workflow"))]
RemotePath = Annotated[str, BeforeValidator(_remote_path)]
RepoFile = Annotated[str, BeforeValidator(_repo_file)]
Labels = Annotated[tuple[Literal["c", "metal", "cuda"], ...], BeforeValidator(_labels)]
RunsOn = Annotated[tuple[str, ...], BeforeValidator(_runs_on)]
Backend = Annotated[Literal["c", "metal", "cuda"], BeforeValidator(choice("c", "metal", "cuda"))]
Title = Annotated[str, BeforeValidator(_title)]
Day = Annotated[date, BeforeValidator(_day)]


class Section(BaseModel):
    """A table of the file: every key known, every value checked, frozen once read."""

    model_config = ConfigDict(frozen=True, extra="forbid")


class Declared(Section):
    """A section whose absence turns a feature off: `declared` says whether the file wrote it."""

    _declared: bool = PrivateAttr(False)

    @property
    def declared(self) -> bool:
        return self._declared

    def written(self) -> Self:
        self._declared = True
        return self
