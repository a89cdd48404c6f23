"""Which reports a pull request or branch claims to fix, and how much code the fix adds: its token delta.

The team prizes fixes that change a representation without growing the code, so a fix is measured in
lexical tokens (a real lexer per language, comments and whitespace not counted), not in lines.
"""
from __future__ import annotations

import re

from pygments.lexers import TextLexer, get_lexer_for_filename
from pygments.token import Comment, Text, is_token_subtype
from pygments.util import ClassNotFound

_FIXES_LINE = re.compile(r"^\s*fix(?:es|ed)?\s*:?\s+((?:perf_[a-z0-9_]+[\s,]*(?:and\s+)?)+)", re.I | re.M)
_SLUG = re.compile(r"perf_[a-z0-9_]+")
_FIX_BRANCH = re.compile(r"^fix/(perf_[a-z0-9_]+)")
_FENCED = re.compile(r"^(```|~~~).*?^\1", re.M | re.S)


def slugs_fixed(pr_body: str | None, branch: str | None) -> tuple[str, ...]:
    """`Fixes perf_x` lines in a PR body (several slugs allowed) and a `fix/perf_x...` branch name."""
    found: list[str] = []
    prose = _FENCED.sub("", pr_body or "")  # a `Fixes` line quoted in a code block is an example, not a claim
    for match in _FIXES_LINE.finditer(prose):
        found += _SLUG.findall(match.group(1))
    branch_match = _FIX_BRANCH.match(branch or "")
    if branch_match:
        # A slug has no '-', so `fix/perf_deep_match-rebuild-arms` names perf_deep_match.
        found.append(branch_match.group(1))
    return tuple(dict.fromkeys(found))


def tokens(text: str, path: str) -> int:
    try:
        lexer = get_lexer_for_filename(path, stripnl=False)
    except ClassNotFound:
        lexer = TextLexer()
    return sum(1 for kind, value in lexer.get_tokens(text)
               if value.strip() and not is_token_subtype(kind, Comment) and not is_token_subtype(kind, Text.Whitespace))


def token_delta(changes: list[tuple[str, str | None, str | None]]) -> int:
    """Tokens added minus tokens removed over (path, before, after) file versions; None is an absent file."""
    return sum(tokens(after or "", path) - tokens(before or "", path) for path, before, after in changes)
