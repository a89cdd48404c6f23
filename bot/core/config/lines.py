"""Where each key of a TOML text is written: tomllib keeps no positions, so a small scanner indexes them.

The text has already parsed, so the scanner only needs to follow table headers, key/value lines, and values that
span lines (arrays, inline tables, multi-line strings). Paths are tuples of keys with the index of each
`[[array]]` table: ("runners", 1, "host") is the second runner's host.
"""
from __future__ import annotations

Path = tuple  # of str keys and int indexes of [[array]] tables


def key_lines(text: str) -> dict[Path, int]:
    index: dict[Path, int] = {}
    counts: dict[Path, int] = {}  # the last index of each [[array]] seen
    table: Path = ()
    pending = _Value()
    for number, line in enumerate(text.splitlines(), 1):
        if pending.open:
            pending.feed(line)
            continue
        stripped = line.strip()
        if stripped.startswith("[["):
            path = _within_arrays(_dotted(stripped[2:_closing(stripped, 2)]), counts)
            counts[path] = counts.get(path, -1) + 1
            table = (*path, counts[path])
            _mark(index, path, number)
            index[table] = number
        elif stripped.startswith("["):
            table = _within_arrays(_dotted(stripped[1:_closing(stripped, 1)]), counts)
            _mark(index, table, number)
        elif stripped and not stripped.startswith("#"):
            equals = _outside_quotes(stripped, "=")
            if equals < 0:
                continue
            _mark(index, table + _dotted(stripped[:equals]), number)
            pending.feed(stripped[equals + 1:])
    return index


def line_for(index: dict[Path, int], loc: Path) -> int:
    """The line of the longest known prefix of `loc`: a missing key is reported at its table's line."""
    for size in range(len(loc), 0, -1):
        if loc[:size] in index:
            return index[loc[:size]]
    return 1


def _mark(index: dict[Path, int], path: Path, number: int) -> None:
    for size in range(1, len(path) + 1):
        index.setdefault(path[:size], number)
    index[path] = number


def _within_arrays(path: Path, counts: dict[Path, int]) -> Path:
    """`[runners.x]` after a `[[runners]]` belongs to that last runner."""
    out: Path = ()
    for key in path:
        out += (key,)
        if out in counts and len(out) < len(path):
            out += (counts[out],)
    return out


def _closing(text: str, start: int) -> int:
    end = _outside_quotes(text[start:], "]")
    return start + end if end >= 0 else len(text)


def _outside_quotes(text: str, wanted: str) -> int:
    quote = None
    for position, char in enumerate(text):
        if quote:
            if char == quote:
                quote = None
        elif char in "\"'":
            quote = char
        elif char == wanted:
            return position
    return -1


def _dotted(key: str) -> Path:
    parts, current, quote = [], "", None
    for char in key:
        if quote:
            if char == quote:
                quote = None
            else:
                current += char
        elif char in "\"'":
            quote = char
        elif char == ".":
            parts.append(current.strip())
            current = ""
        else:
            current += char
    return tuple([*parts, current.strip()])


class _Value:
    """Follows a value across lines: open brackets and multi-line strings keep it open."""

    def __init__(self) -> None:
        self.depth = 0
        self.string: str | None = None

    @property
    def open(self) -> bool:
        return bool(self.depth or self.string)

    def feed(self, text: str) -> None:
        position = 0
        while position < len(text):
            if self.string:
                end = text.find(self.string, position)
                if end < 0:
                    return
                position, self.string = end + 3, None
                continue
            char = text[position]
            if text.startswith(('"""', "'''"), position):
                self.string, position = text[position:position + 3], position + 3
            elif char in "\"'":
                end = position + 1
                while end < len(text) and text[end] != char:
                    end += 2 if char == '"' and text[end] == "\\" else 1
                position = end + 1
            elif char == "#":
                return
            else:
                self.depth += (char in "[{") - (char in "]}")
                position += 1
