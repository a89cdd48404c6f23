"""Text perfbot reposts but did not write (reports, what agents and the reviewer model say): shown as written,
never able to act through GitHub's rendering.

Inside a fence longer than any backtick run in it, nothing is HTML (a `</details>` cannot close the fold the
text sits in) and no @mention notifies anyone. Outside a fence, a zero-width space after each `@` keeps the
text readable while GitHub links and pings nobody: perfbot must never page people on an agent's behalf.
"""
from __future__ import annotations

import re

from bot.core.verify.bench_view import code_span

NO_PING = "@\u200b"
_MARKDOWN = re.compile(r"([\\`*_\[\]<>|#!~&$])")


def quiet_mentions(text: str) -> str:
    return str(text).replace("@", NO_PING)


_AUTOLINK = re.compile(r"(?i)(://|\bwww\.)")


def unlinked(text: str) -> str:
    """An LLM's words on one line: no markdown (so no [link](...)), no mention, and no address GitHub would turn
    into a link (`://` and `www.` broken by a zero-width space). A report's author may have written them."""
    return _break_autolinks(cell(text))


def no_links(text: str) -> str:
    """Text that may hold an LLM's words (an agent audit's findings) where `code` must stay code: no mention,
    no [link](...) and no address GitHub would link."""
    return _break_autolinks(quiet_mentions(str(text)).replace("](", "]\u200b("))  # `](` no longer makes a link


def _break_autolinks(text: str) -> str:
    return _AUTOLINK.sub(lambda m: m.group(1)[:-1] + "\u200b" + m.group(1)[-1], text)


_CODE_SPAN = re.compile(r"(`+)(.+?)(?<!`)\1(?!`)")
_ESCAPED = re.compile(r"\\([!-/:-@\[-`{-~])")


def title_cell(text: str) -> str:
    """A report's title in a table cell or list line: its `code` stays code (what agents write for `%` or a
    function's name), a backslash escape (sum\\_mod) shows its character, and everything else is made literal
    as `cell` makes it. Inside a code span nothing is markdown, HTML or a mention; a `|` is escaped for tables."""
    line, parts, start = " ".join(str(text).split()), [], 0
    for found in _CODE_SPAN.finditer(line):
        parts.append(_literal(_ESCAPED.sub(r"\1", line[start:found.start()])))
        code = found.group(2).strip() or found.group(2)
        fence = "`" * (max((len(m) for m in re.findall(r"`+", code)), default=0) + 1)
        pad = " " if code.startswith("`") or code.endswith("`") else ""
        parts.append(f"{fence}{pad}{code.replace('|', chr(92) + '|')}{pad}{fence}")
        start = found.end()
    parts.append(_literal(_ESCAPED.sub(r"\1", line[start:])))
    return "".join(parts)


def fenced(text: str, info: str = "text") -> str:
    """Untrusted text as a code block whose fence is longer than any backtick run inside it."""
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{info}\n{text}\n{fence}"


def cell(text: str) -> str:
    """Untrusted text in a table cell: one line, markdown made literal, and no @mention that would ping anyone."""
    return _literal(" ".join(str(text).split()))


def code_cell(text: str) -> str:
    """Untrusted text as inline code in a table cell: a pipe must still be escaped there."""
    return code_span(str(text)).replace("|", "\\|")


def _literal(text: str) -> str:
    return quiet_mentions(_MARKDOWN.sub(r"\\\1", text))
