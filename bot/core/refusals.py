"""A user's refusal: a closed set of kinds, each with its facts as fields, and the one place they become text.

A refusal says what is wrong (`problem`) and how to retry (`fix`); its kind says who can mend it (the person
asking, the repository's .perfbot.toml, the operator, or time) and carries the facts a reader needs (the file
and line, the name looked for, the host, the key). Every surface renders it here: the comment answer, the
CLI's `error:`/`fix:` lines, the MCP tool error, the log line, and the one sentence a bench run stores.
"""
from __future__ import annotations

from typing import Literal

Owner = Literal["operator", "repository"]
OWNER_FILE: dict[Owner, str] = {"operator": "the operator's instance file (instance/perfbot.toml or PERFBOT_*)",
                                "repository": ".perfbot.toml"}


class UserError(Exception):
    """Bad input from a person or an agent: shown to them, it says what is wrong and how to retry.

    The base of the kinds below; raise a kind, never this (tests/service/test_refusals.py keeps it so)."""

    kind = "refused"
    icon = "⚠️"

    def __init__(self, problem: str, fix: str = "") -> None:
        super().__init__(problem)
        self.problem = problem
        self.fix = fix

    def __str__(self) -> str:
        return sentence(self)

    def __eq__(self, other: object) -> bool:  # a value: the same refusal read twice is equal (a re-parsed comment)
        return type(other) is type(self) and other.__dict__ == self.__dict__

    def __hash__(self) -> int:
        return hash((type(self), sentence(self)))

    def __reduce__(self) -> tuple[object, ...]:  # keyword-only fields survive a pickle (args hold the problem only)
        return _rebuilt, (type(self), dict(self.__dict__))


def _rebuilt(kind: type[UserError], fields: dict[str, object]) -> UserError:
    refusal = kind.__new__(kind)
    Exception.__init__(refusal, fields.get("problem", ""))
    refusal.__dict__.update(fields)
    return refusal


class Invalid(UserError):
    """Input that is wrong as given (a command's arguments, a file's key, a name, a commit, an artifact):
    `at` the file or thing, `line` and `key` within it when known."""

    kind = "invalid"

    def __init__(self, problem: str, fix: str = "", *, at: str = "", line: int | None = None, key: str = "") -> None:
        super().__init__(problem, fix)
        self.at, self.line, self.key = at, line, key


class NotFound(UserError):
    """A record, run, runner, commit, file or setting that `name` asks for is not there; `fix` says where to
    look."""

    kind = "not found"

    def __init__(self, problem: str, fix: str = "", *, name: str = "") -> None:
        super().__init__(problem, fix)
        self.name = name


class NotAllowed(UserError):
    """Refused by a rule: a person's permission, or what the operator allows (hosts, sources, folders,
    branches); `rule` says whose rule it is."""

    kind = "not allowed"
    icon = "🚫"

    def __init__(self, problem: str, fix: str = "", *, rule: str = "") -> None:
        super().__init__(problem, fix)
        self.rule = rule


class Busy(UserError):
    """Something is already going: retry once `waiting_for` is done."""

    kind = "busy"
    icon = "⏳"

    def __init__(self, problem: str, fix: str = "", *, waiting_for: str) -> None:
        super().__init__(problem, fix or f"wait for {waiting_for}, then ask again")
        self.waiting_for = waiting_for


class NotConfigured(UserError):
    """The configuration lacks what this needs: `key`, which belongs in the `owner`'s file (the operator's
    instance file, or the repository's .perfbot.toml); or a tool the machine lacks (no key then)."""

    kind = "not configured"

    def __init__(self, problem: str, fix: str = "", *, key: str = "", owner: Owner = "repository") -> None:
        super().__init__(problem, fix or (f"set {key} in {OWNER_FILE[owner]}" if key else ""))
        self.key, self.owner = key, owner


class Unreachable(UserError):
    """A bench host or a source refused or could not be reached in a way a retry alone will not mend."""

    kind = "unreachable"

    def __init__(self, problem: str, fix: str = "", *, host: str) -> None:
        super().__init__(problem, fix)
        self.host = host


KINDS: tuple[type[UserError], ...] = (Invalid, NotFound, NotAllowed, Busy, NotConfigured, Unreachable)


def place(refusal: UserError) -> str:
    """Where the problem is, as a prefix: `file:line: key: ` for bad input, `host: ` for a host."""
    match refusal:
        case Invalid(at=at, line=line, key=key):
            parts = [f"{at}:{line}" if at and line is not None else at, key]
            return "".join(f"{part}: " for part in parts if part)
        case Unreachable(host=host):
            return f"{host}: "
    return ""


def sentence(refusal: UserError) -> str:
    """One line, the refusal's own `str()`: what a bench run stores and any plain-text reader shows."""
    said = place(refusal) + refusal.problem
    return f"{said}; {refusal.fix}" if refusal.fix else said


def comment(refusal: UserError) -> str:
    """The answer to a comment command (markdown): the kind's icon, the problem, and how to retry."""
    said = f"{refusal.icon} {place(refusal)}{refusal.problem}"
    return f"{said}\n\n**To retry:** {refusal.fix}" if refusal.fix else said


def cli(refusal: UserError) -> str:
    """The CLI's lines on stderr: `error: ...`, then `fix: ...` when there is one."""
    said = f"error: {place(refusal)}{refusal.problem}"
    return f"{said}\nfix: {refusal.fix}" if refusal.fix else said


def tool(refusal: UserError) -> str:
    """An MCP tool error: the kind first, so an agent can branch on it, then the problem and the fix."""
    said = f"{refusal.kind}: {place(refusal)}{refusal.problem}"
    return f"{said}\nfix: {refusal.fix}" if refusal.fix else said


def log_line(refusal: UserError) -> str:
    """One log line: the kind, the problem and the fix, on one line whatever the texts hold."""
    said = f"refused ({refusal.kind}): {sentence(refusal)}"
    return " ".join(said.split())
