"""One pass over markdown-it tokens: headings, prose lines, label lines, code blocks, tables, front matter."""
from __future__ import annotations

import re
from dataclasses import dataclass

from markdown_it import MarkdownIt
from mdit_py_plugins.front_matter import front_matter_plugin

from bot.core.reports.codeblocks import fence_is_closed, lang_of, tag_of_info
from bot.core.reports.headings import Heading, Label, label_of_line, section_of_heading
from bot.core.reports.tables import RawTable

# markdown-it's own bound on nesting: content more than MAX_NESTING levels deep (a blockquote is one level, a list
# item two: its list and itself) is skipped by the parser rather than recursed into, so a line of 100,000 `>`
# costs a hundred levels and never a RecursionError; scan names the line where reading stopped.
MAX_NESTING = 100
_CONTAINERS = frozenset({"blockquote_open", "list_item_open"})
# Built once: parsing 10,000 reports must not rebuild the rule chains; the instance is not changed after this.
# Only block structure and the raw text of inline tokens are read, so inline parsing (a third of the time) is off.
MARKDOWN = (MarkdownIt("commonmark", {"maxNesting": MAX_NESTING + 1}).enable("table").use(front_matter_plugin)
            .disable("inline"))


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
    too_deep: tuple[int, ...] = ()  # first lines of the blocks whose content lay past MAX_NESTING, unread


def scan(text: str, lines: list[str], language_tags: tuple[str, ...] = ()) -> Scan:
    tokens = MARKDOWN.parse(text)
    front_matter = None
    headings: list[Heading] = []
    prose: list[tuple[int, str]] = []
    labels: list[Label] = []
    blocks: list[RawBlock] = []
    tables: list[RawTable] = []
    too_deep: dict[int, None] = {}
    words = 0
    index, count = 0, len(tokens)
    while index < count:
        token = tokens[index]
        kind = token.type
        start = token.map[0] if token.map else 0
        if kind in _CONTAINERS and token.level >= MAX_NESTING:
            too_deep[start + 1] = None  # what this block holds lies past the bound: the parser skipped it
        if kind == "front_matter":
            front_matter = (token.content, start + 2)
        elif kind == "heading_open":
            content = tokens[index + 1].content.strip()
            headings.append(Heading(start, int(token.tag[1:]), content, section_of_heading(content)))
            prose.append((start + 1, content))
            index += 3
            continue
        elif kind == "table_open":
            table, index = _read_table(tokens, index)
            tables.append(table)
            for line, row in _fact_rows(table):  # `| track | SEQ |`, `| root cause | ... |`: facts, not runs
                prose.append((line, row))
                label = label_of_line(row)
                if label is not None:
                    labels.append(Label(line - 1, *label))
            continue
        elif kind == "inline":  # a paragraph's, or a tight list item's
            content = token.content
            words += len(content.split())
            # Facts are read per paragraph, not per line: agents hard-wrap sentences ("The C\ntranslation is
            # 66x faster"). A fact then points at its paragraph's first line.
            prose.append((start + 1, " ".join(content.split("\n"))))
            for offset, text in enumerate(content.split("\n")):
                label = label_of_line(text)
                if label is not None:
                    labels.append(Label(start + offset, *label))
        elif kind in ("fence", "code_block"):
            tag = tag_of_info(token.info) if kind == "fence" else ""
            end = token.map[1] if token.map else start + 1
            closed = kind == "code_block" or fence_is_closed(token.markup, start, end, lines)
            blocks.append(RawBlock(start, tag, lang_of(tag, token.content, language_tags), token.content, closed,
                                   token.markup))
        index += 1
    return Scan(front_matter, tuple(headings), tuple(prose), words, tuple(labels), tuple(blocks), tuple(tables),
                tuple(too_deep))


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


def _read_table(tokens: list, index: int) -> tuple[RawTable, int]:
    """Cells of one table as written, each row with its 1-based line; and the index just past its table_close."""
    table_line = tokens[index].map[0] + 1
    header: tuple[str, ...] = ()
    rows: list[tuple[int, tuple[str, ...]]] = []
    cells: list[str] = []
    row_line, in_head = table_line, False
    index += 1
    while tokens[index].type != "table_close":
        token = tokens[index]
        if token.type == "thead_open":
            in_head = True
        elif token.type == "thead_close":
            in_head = False
        elif token.type == "tr_open":
            cells, row_line = [], token.map[0] + 1
        elif token.type == "inline":
            cells.append(token.content)
        elif token.type == "tr_close":
            if in_head:
                header = tuple(cells)
            else:
                rows.append((row_line, tuple(cells)))
        index += 1
    return RawTable(table_line, header, tuple(rows)), index + 1
