"""The lines of a comment a command may sit on: paragraph text outside code, quotes, tables and HTML."""
from __future__ import annotations

import bisect
import re
from collections import defaultdict
from collections.abc import Iterator

from markdown_it import MarkdownIt

# CommonMark plus GFM tables, as GitHub renders comments. Only block structure is read: inline parsing is off,
# and the two inline constructs that can hide a line start (code spans, HTML comments) are found by _hidden.
MARKDOWN = MarkdownIt("commonmark").enable("table").disable("inline")

_BACKTICKS = re.compile(r"`+")


def normalise(body: str) -> str:
    """LF line ends, as GitHub may deliver CRLF; line numbers stay those a person sees."""
    return body.replace("\r\n", "\n").replace("\r", "\n")


def prose_lines(body: str) -> Iterator[tuple[int, str]]:
    """(1-based line number, raw line) for every line that starts visible paragraph text, in order."""
    lines = body.split("\n")
    quotes = 0
    for token in MARKDOWN.parse(body):
        if token.type == "blockquote_open":
            quotes += 1
        elif token.type == "blockquote_close":
            quotes -= 1
        elif quotes or token.map is None:
            continue
        elif token.type == "paragraph_open":
            yield from _visible(lines, token.map[0], token.map[1])
        elif token.type == "heading_open" and token.markup in ("=", "-"):
            # A setext heading is a paragraph with an underline; its text lines are read like a paragraph's.
            yield from _visible(lines, token.map[0], token.map[1] - 1)


def _visible(lines: list[str], start: int, end: int) -> Iterator[tuple[int, str]]:
    """The lines start..end-1 of one paragraph, less those that begin inside a code span or HTML comment."""
    block = lines[start:end]
    hidden = _hidden("\n".join(block))
    offset = 0
    for index, line in enumerate(block):
        if not any(first < offset < last for first, last in hidden):
            yield start + index + 1, line
        offset += len(line) + 1


def _hidden(text: str) -> list[tuple[int, int]]:
    """(start, end) of each code span and HTML comment in a paragraph, read left to right as CommonMark does."""
    runs: dict[int, list[int]] = defaultdict(list)
    for match in _BACKTICKS.finditer(text):
        runs[len(match.group())].append(match.start())
    spans: list[tuple[int, int]] = []
    comments_close = True  # once a `<!--` finds no `-->`, no later one can: stop searching (no quadratic time)
    position, size = 0, len(text)
    while position < size:
        char = text[position]
        if char == "\\":
            position += 2
        elif char == "`":
            end = position
            while end < size and text[end] == "`":
                end += 1
            closers = runs[end - position]
            found = bisect.bisect_left(closers, end)
            if found < len(closers):
                close_end = closers[found] + end - position
                spans.append((position, close_end))
                position = close_end
            else:
                position = end
        elif char == "<" and comments_close and text.startswith("<!--", position):
            rest = position + 4
            if text.startswith(">", rest) or text.startswith("->", rest):
                position = text.index(">", rest) + 1
                continue
            close = text.find("-->", rest)
            if close < 0:
                comments_close = False
                position = rest
            else:
                spans.append((position, close + 3))
                position = close + 3
        else:
            position += 1
    return spans
