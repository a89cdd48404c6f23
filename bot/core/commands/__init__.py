"""The comment-command grammar: `/perf <verb> ...` and `@perfbot <verb> ...` lines found in a comment, parsed."""
from __future__ import annotations

import re
import shlex
from collections import Counter
from dataclasses import dataclass

from bot.core.commands.args import CommandSyntaxError, shown, split_arguments
from bot.core.commands.lines import normalise, prose_lines
from bot.core.commands.verbs import VERBS, Command, Verb

__all__ = [
    "ALIASES",
    "MAX_COMMANDS",
    "MAX_LINE",
    "VERBS",
    "CommandSyntaxError",
    "Invocation",
    "Verb",
    "find_commands",
    "help_text",
    "new_commands",
]

MAX_COMMANDS = 10
MAX_LINE = 1000

# Other spellings people reach for; an Invocation always carries the canonical verb, so VERBS[verb] works.
ALIASES = {"notdup": "not-dup", "not_dup": "not-dup"}

# Phones and some editors turn straight double quotes into curly ones; shlex only knows the straight kind.
_CURLY = str.maketrans({"\u201c": '"', "\u201d": '"', "\u201e": '"'})


@dataclass(frozen=True)
class Invocation:
    """One command line found in a comment: parsed (`command`), or why not (`error`)."""

    verb: str                # canonical verb (aliases resolved), lower-cased; as written for an unknown one
    line: int                # 1-based line in the comment body
    text: str                # the command line as written, stripped
    command: Command | None   # the verb's dataclass, or None when malformed or unknown
    error: CommandSyntaxError | None  # what is wrong, and the usage (or help) to retry with
    unknown: bool = False    # the verb is not ours: the caller answers with help_text()


def find_commands(body: str | None, bot_name: str = "perfbot") -> list[Invocation]:
    """Every command of a comment in order; past MAX_COMMANDS, one error Invocation stands for the rest."""
    lines = _command_lines(body or "", bot_name)
    found = [_invocation(*line) for line in lines[:MAX_COMMANDS]]
    if len(lines) > MAX_COMMANDS:
        number, text, rest = lines[MAX_COMMANDS]
        left = len(lines) - MAX_COMMANDS
        error = CommandSyntaxError(f"a comment may hold at most {MAX_COMMANDS} commands; this one and the "
                                   f"{left - 1} after it were not run", "put them in another comment")
        found.append(Invocation(_verb_of(rest), number, text, None, error))
    return found


def new_commands(old_body: str | None, new_body: str | None, bot_name: str = "perfbot") -> list[Invocation]:
    """The commands of an edited comment that its previous body did not already hold (and so were not answered).

    Commands match by verb and arguments, whatever their line, prefix or spacing; each old command accounts
    for one new one, so an edit that repeats a command adds a run.
    """
    before = Counter(_key(invocation) for invocation in find_commands(old_body, bot_name))
    fresh = []
    for invocation in find_commands(new_body, bot_name):
        key = _key(invocation)
        if before[key]:
            before[key] -= 1
        else:
            fresh.append(invocation)
    return fresh


def help_text(bot_name: str = "perfbot") -> str:
    """Markdown: how to write a command, then one line per verb (usage and summary) in the order of VERBS."""
    name = _bare_name(bot_name) or "perfbot"
    lines = [
        f"Write a command at the start of a line, as `/perf <verb> ...` or `@{name} <verb> ...`; one comment may "
        f"hold up to {MAX_COMMANDS}. Lines in code blocks, code spans, quotes and HTML comments are ignored.",
        "",
    ]
    lines += [f"- `{verb.usage}` — {verb.summary}" for verb in VERBS.values()]
    free = " and ".join(name for name, verb in VERBS.items() if not verb.write)
    lines += [
        "",
        "SLUG is a report's name, such as `perf_sort_alloc`; RUN is a bench run number. "
        f"Every command except {free} needs write access to the repository.",
    ]
    return "\n".join(lines)


def _bare_name(bot_name: str) -> str:
    name = bot_name.strip().removeprefix("@")
    return name[:-5] if name.lower().endswith("[bot]") else name


def _prefix(bot_name: str) -> re.Pattern[str]:
    """`/perf` or `@name` / `@name[bot]` (a GitHub App's login), any case, then a space or the line's end."""
    name = _bare_name(bot_name)
    mention = rf"|@{re.escape(name)}(?:\[bot\])?" if name else ""
    return re.compile(rf"(?:/perf{mention})(?=\s|$)", re.IGNORECASE)


def _command_lines(body: str, bot_name: str) -> list[tuple[int, str, str]]:
    """(line number, stripped line, text after the prefix) of each line that starts with a prefix."""
    prefix = _prefix(bot_name)
    found = []
    for number, line in prose_lines(normalise(body)):
        text = line.strip()
        match = prefix.match(text)
        if match is not None:
            found.append((number, text, text[match.end():]))
    return found


def _verb_of(rest: str) -> str:
    words = rest.split(maxsplit=1)
    written = words[0].lower() if words else "help"
    return ALIASES.get(written, written)


def _invocation(number: int, text: str, rest: str) -> Invocation:
    verb = _verb_of(rest)
    grammar = VERBS.get(verb)
    if grammar is None:
        return Invocation(shown(verb), number, text, None, CommandSyntaxError(f"unknown command '{shown(verb)}'"),
                          unknown=True)
    if len(text) > MAX_LINE:
        return Invocation(verb, number, text, None, CommandSyntaxError(
            f"the command line is {len(text)} characters; at most {MAX_LINE} are read", f"usage: {grammar.usage}"))
    try:
        try:
            tokens = shlex.split(rest.translate(_CURLY), posix=True)
        except ValueError as error:  # "No closing quotation", "No escaped character"
            raise CommandSyntaxError(f"cannot read the arguments: {str(error).lower()}") from None
        args, options = split_arguments(tokens[1:])
        command = grammar.parse(args, options)
    except CommandSyntaxError as error:
        error.fix = "; ".join(filter(None, (error.fix, f"usage: {grammar.usage}")))
        return Invocation(verb, number, text, None, error)
    return Invocation(verb, number, text, command, None)


def _key(invocation: Invocation) -> str:
    """What makes two command lines the same command: verb and arguments, not prefix, case of verb or spacing."""
    return " ".join([invocation.verb, *invocation.text.split()[2:]])
