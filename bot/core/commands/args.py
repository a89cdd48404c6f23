"""Checks the per-verb parsers share: slugs, argument counts, key=value options, and the error they raise."""
from __future__ import annotations

import re

from bot.core.reports.records import SLUG_RE
from bot.errors import Invalid

# An option key starts with a letter, so a token like `=x` or `#12=` stays a (bad) positional argument.
_OPTION = re.compile(r"([A-Za-z][A-Za-z0-9_-]*)=(.*)", re.DOTALL)
_SHOWN = 60


class CommandSyntaxError(Invalid):
    """A command that is ours but malformed: what is wrong, and how to write it (find_commands adds the usage)."""


def shown(token: str) -> str:
    """A token as quoted back in an error: long tokens are cut so an answer never echoes a wall of text."""
    return token if len(token) <= _SHOWN else token[: _SHOWN - 1] + "…"


def split_arguments(tokens: list[str] | tuple[str, ...]) -> tuple[tuple[str, ...], dict[str, str]]:
    """Positional arguments in order, and `key=value` options by lower-cased key; a repeated key is an error."""
    args: list[str] = []
    options: dict[str, str] = {}
    for token in tokens:
        match = _OPTION.fullmatch(token)
        if match is None:
            args.append(token)
            continue
        key = match.group(1).lower()
        if key in options:
            raise CommandSyntaxError(f"{key}= is given twice")
        options[key] = match.group(2)
    return tuple(args), options


def check_options(verb: str, options: dict[str, str], allowed: tuple[str, ...] = ()) -> None:
    """Refuse any option the verb does not take, naming the ones it does."""
    for key in options:
        if key in allowed:
            continue
        if not allowed:
            raise CommandSyntaxError(f"{verb} takes no key=value options (got {shown(key)}=)")
        names = ", ".join(f"{name}=" for name in allowed)
        raise CommandSyntaxError(f"unknown option {shown(key)}=", f"{verb} takes only {names}")


def check_count(verb: str, args: tuple[str, ...], least: int, most: int, what: str) -> None:
    """Refuse too few or too many positional arguments; `what` names them as the usage does."""
    if least <= len(args) <= most:
        return
    if least == most:
        wanted = "no arguments" if least == 0 else f"exactly {least} {what}"
    elif len(args) < least:
        wanted = f"at least {least} {what}"
    else:
        wanted = f"at most {most} {what}"
    got = ", ".join(f"'{shown(arg)}'" for arg in args) if args else "nothing"
    raise CommandSyntaxError(f"{verb} takes {wanted}, got {got}")


def slug(token: str) -> str:
    """A full report slug (`perf_x`), or an error that suggests the slug the person most likely meant."""
    if SLUG_RE.fullmatch(token):
        return token
    if re.fullmatch(r"#\d+", token):
        raise CommandSyntaxError(f"'{token}' is an issue or PR number", "name the report by its slug (perf_...)")
    # People write the file name, a path, the bare name, capitals or dashes: suggest, never guess silently.
    guess = token.strip().lower().replace("\\", "/").rsplit("/", 1)[-1].removesuffix(".md").replace("-", "_")
    if not guess.startswith("perf_"):
        guess = f"perf_{guess}"
    if SLUG_RE.fullmatch(guess):
        raise CommandSyntaxError(f"'{shown(token)}' is not a report slug", f"did you mean {guess}?")
    raise CommandSyntaxError(
        f"'{shown(token)}' is not a report slug (perf_ followed by lowercase letters, digits and _)")


def two_slugs(verb: str, args: tuple[str, ...]) -> tuple[str, str]:
    """Exactly two different slugs, as not-dup and merge take them."""
    check_count(verb, args, 2, 2, "SLUGs")
    first, second = slug(args[0]), slug(args[1])
    if first == second:
        raise CommandSyntaxError(f"{verb} needs two different records, got {first} twice")
    return first, second
