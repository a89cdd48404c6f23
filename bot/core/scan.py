"""One walk over the markdown block tree: headings, prose lines, label lines, code blocks, tables, front matter."""
from __future__ import annotations

import re
from bisect import bisect_right
from dataclasses import dataclass

from markdown_it_pyrs import MarkdownIt

from bot.core.codeblocks import fence_is_closed, lang_of, tag_of_info
from bot.core.headings import Heading, Label, label_of_line, section_of_heading
from bot.core.tables import RawTable

# markdown-it-pyrs is markdown-it's Rust port by markdown-it-py's maintainers: the same CommonMark block rules,
# building the tree about six times faster, which is most of what reading a 10,000-report sync costs.
# Only block structure and the raw text inside blocks are read, so no inline rule is enabled: a paragraph's one
# text child is its source text. Built once; the instance is not changed after this.
BLOCK_RULES = ("blockquote", "code", "fence", "heading", "hr", "lheading", "list", "paragraph", "reference",
               "html_block", "table")
PARSER = MarkdownIt("zero").enable_many(list(BLOCK_RULES))

# The Rust parser recurses once per open container and has no depth limit: one line of 50,000 `>` overflows the
# native stack and kills the process. A line opening more than MAX_NESTING blockquotes or list items has its next
# marker escaped; nesting by indentation needs one line per level, so a report would need gigabytes to get there.
MAX_NESTING = 100
_MARKER = r"(?:>|[-+*][ \t]|\d{1,9}[.)][ \t])"
_TOO_DEEP = re.compile(rf"^(?:[ \t]*+{_MARKER}){{{MAX_NESTING}}}[ \t]*+(?={_MARKER})", re.MULTILINE)


@dataclass(frozen=True)
class RawBlock:
    """A code block before it is assigned to a section (`index` is its 0-based first line)."""

    index: int
    tag: str
    lang: str
    code: str
    closed: bool
    markup: str


@dataclass(frozen=True)
class Scan:
    """What the document contains, in document order; lines in `prose` and `too_deep` are 1-based."""

    front_matter: tuple[str, int] | None  # (YAML source, file line of its first line)
    headings: tuple[Heading, ...]
    prose: tuple[tuple[int, str], ...]
    prose_words: int
    labels: tuple[Label, ...]
    blocks: tuple[RawBlock, ...]
    tables: tuple[RawTable, ...]
    too_deep: tuple[int, ...] = ()  # lines whose markers past MAX_NESTING were read as text


def scan(text: str, lines: list[str]) -> Scan:
    front_matter, source = _front_matter(text, lines)
    bounded, too_deep = _bounded(source)
    tree = PARSER.tree(bounded)
    if too_deep:
        # Inside a code block that no quote or list holds, markers are the code's own characters: nothing nests,
        # so those lines are read as written (the escaped parse put them there, and a line's content after its
        # indent never moves it into or out of such a block).
        spared = frozenset(too_deep) & _top_level_code_lines(tree, _LineIndex(bounded))
        if spared:
            bounded, too_deep = _bounded(source, spared)
            tree = PARSER.tree(bounded)
    source = bounded
    line_of = _LineIndex(source)
    headings: list[Heading] = []
    prose: list[tuple[int, str]] = []
    labels: list[Label] = []
    blocks: list[RawBlock] = []
    tables: list[RawTable] = []
    words = 0
    pending = list(reversed(tree.children))
    while pending:
        node = pending.pop()
        kind = node.name
        start = line_of(node.srcmap[0])
        if kind == "text":  # a paragraph's, or a tight list item's
            content = node.meta["content"]
            words += len(content.split())
            # Facts are read per paragraph, not per line: agents hard-wrap sentences ("The C\ntranslation is
            # 66x faster"). A fact then points at its paragraph's first line.
            prose.append((start + 1, " ".join(content.split("\n"))))
            for offset, line in enumerate(content.split("\n")):
                label = label_of_line(line)
                if label is not None:
                    labels.append(Label(start + offset, *label))
        elif kind in ("heading", "lheading"):
            content = _text_of(node).strip()
            headings.append(Heading(start, node.meta["level"], content, section_of_heading(content)))
            prose.append((start + 1, content))
        elif kind == "table":
            table = _read_table(node, line_of)
            tables.append(table)
            for line, row in _fact_rows(table):  # `| track | SEQ |`, `| root cause | ... |`: facts, not runs
                prose.append((line, row))
                label = label_of_line(row)
                if label is not None:
                    labels.append(Label(line - 1, *label))
        elif kind in ("fence", "code_block"):
            blocks.append(_block(node, kind, start, line_of, lines, text))
        else:
            pending.extend(reversed(node.children))
    return Scan(front_matter, tuple(headings), tuple(prose), words, tuple(labels), tuple(blocks), tuple(tables),
                too_deep)


def _front_matter(text: str, lines: list[str]) -> tuple[tuple[str, int] | None, str]:
    """The YAML between an opening `---` on line 1 and its closing `---` or `...`, and the text with those lines
    blanked for the block parser. The rule is mdit-py-plugins' front_matter, which agents' reports were written
    against; the Rust port's own front matter rule does not accept `...`."""
    opening = len(lines[0]) - len(lines[0].lstrip("-"))
    if opening < 3:
        return None, text
    for index in range(1, len(lines)):
        line = lines[index]
        body = line.lstrip(" \t")
        indent = len(line.expandtabs(4)) - len(body.expandtabs(4))
        if indent == 0 and body.startswith("...") and not body[3:].strip(" \t"):
            break
        dashes = len(body) - len(body.lstrip("-"))
        if indent < 4 and dashes >= opening and not body[dashes:].strip(" \t"):
            break
    else:
        return None, text
    closed_at = sum(len(line) + 1 for line in lines[:index + 1])
    blanked = "\n" * index + ("\n" if closed_at <= len(text) else "") + text[closed_at:]
    return ("\n".join(lines[1:index]), 2), blanked


def _bounded(text: str, spared: frozenset[int] = frozenset()) -> tuple[str, tuple[int, ...]]:
    """The text with every marker past MAX_NESTING on a line escaped, and the (1-based) lines that had one;
    `spared` lines are left as they are."""
    if _TOO_DEEP.search(text) is None:
        return text, ()
    cut: list[int] = []

    def escape(match: re.Match) -> str:
        line = text.count("\n", 0, match.start()) + 1
        if line in spared:
            return match.group(0)
        cut.append(line)
        return match.group(0) + "\\"

    return _TOO_DEEP.sub(escape, text), tuple(cut)


def _top_level_code_lines(tree, line_of: "_LineIndex") -> frozenset[int]:
    """The (1-based) lines of the code blocks directly in the document, fences' own lines included."""
    lines: set[int] = set()
    for node in tree.children:
        if node.name in ("fence", "code_block"):
            lines.update(range(line_of(node.srcmap[0]) + 1, line_of(node.srcmap[1]) + 2))
    return frozenset(lines)


class _LineIndex:
    """0-based line of a byte offset into the UTF-8 source (the tree's source maps count bytes)."""

    def __init__(self, text: str):
        data = text.encode("utf-8")
        starts, at = [0], data.find(b"\n")
        while at != -1:
            starts.append(at + 1)
            at = data.find(b"\n", at + 1)
        self._starts = starts

    def __call__(self, offset: int) -> int:
        return bisect_right(self._starts, offset) - 1


def _text_of(node) -> str:
    return "".join(child.meta["content"] for child in node.children if child.name == "text")


def _block(node, kind: str, start: int, line_of: _LineIndex, lines: list[str], text: str) -> RawBlock:
    meta = node.meta
    content = meta["content"]
    end = line_of(node.srcmap[1]) + 1  # exclusive; a source map ends before its last line's newline
    if kind == "code_block":
        return RawBlock(start, "", lang_of("", content), content, True, "")
    tag, markup = tag_of_info(meta.get("info", "")), meta["marker"] * meta["marker_len"]
    if not text.endswith("\n") and end >= len(lines) and content.count("\n") == end - start - 1:
        content = content.removesuffix("\n")  # a fence left open to the last, unterminated line: keep it as is
    return RawBlock(start, tag, lang_of(tag, content), content, fence_is_closed(markup, start, end, lines), markup)


_FACT_KEYS = re.compile(r"(?i)^(?:track|backend|threads?|ratio|host|machine|claim|root[- ]?cause|cause|why|fix|"
                        r"status|runtime|context|summary)$")


def _fact_rows(table: RawTable) -> list[tuple[int, str]]:
    """A two-column table whose first column names facts is a front matter written as a table."""
    rows = [(table.line, table.header)] + [(line, cells) for line, cells in table.rows]
    pairs = [(line, _plain(cells[0]), _plain(cells[1])) for line, cells in rows if len(cells) == 2]
    keyed = [(line, key, value) for line, key, value in pairs if _FACT_KEYS.match(key) and value]
    if len(keyed) < 2 or len(keyed) * 2 < len(pairs):
        return []
    return [(line, f"{key}: {value}") for line, key, value in keyed]


def _plain(cell: str) -> str:
    return " ".join(cell.replace("**", "").replace("__", "").split())


def _read_table(node, line_of: _LineIndex) -> RawTable:
    """Cells of one table as written, each row with its 1-based line."""
    header: tuple[str, ...] = ()
    rows: list[tuple[int, tuple[str, ...]]] = []
    for part in node.children:  # thead, tbody
        for row in part.children:
            cells = tuple(_text_of(cell) for cell in row.children)
            if part.name == "thead":
                header = cells
            else:
                rows.append((line_of(row.srcmap[0]) + 1, cells))
    return RawTable(line_of(node.srcmap[0]) + 1, header, tuple(rows))
