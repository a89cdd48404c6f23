"""Text perfbot reposts but did not write (reports, what agents and the reviewer model say): shown as written,
never able to act through GitHub's rendering.

Inside a fence longer than any backtick run in it, nothing is HTML (a `</details>` cannot close the fold the
text sits in) and no @mention notifies anyone. Outside a fence, a zero-width space after each `@` keeps the
text readable while GitHub links and pings nobody: perfbot must never page people on an agent's behalf.
"""
from __future__ import annotations

import re

NO_PING = "@\u200b"
_MARKDOWN = re.compile(r"([\\`*_\[\]<>|#!~&$])")


def quiet_mentions(text: str) -> str:
    return str(text).replace("@", NO_PING)


def fenced(text: str, info: str = "text") -> str:
    """Untrusted text as a code block whose fence is longer than any backtick run inside it."""
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{info}\n{text}\n{fence}"


def cell(text: str) -> str:
    """Untrusted text in a table cell: one line, markdown made literal, and no @mention that would ping anyone."""
    return quiet_mentions(_MARKDOWN.sub(r"\\\1", " ".join(str(text).split())))
