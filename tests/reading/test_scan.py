"""The block scan: line numbers, raw text, code blocks, tables and front matter from markdown-it's tokens, and its
bound on nesting."""
from __future__ import annotations

import pytest

from bot.core.reports.reading import read_report
from bot.core.reports.records import ReadingOptions
from bot.core.reports.scan import MAX_NESTING, scan


def scanned(text: str):
    return scan(text, text.split("\n"))


def test_lines_of_non_ascii_text_keep_their_numbers():
    document = scanned("# Über Ärger 🚀\n\nZürich ±2× café\nstill the same paragraph\n\n"
                       "## Root cause\n\nRoot cause: ü\n")
    assert [(h.index, h.text) for h in document.headings] == [(0, "Über Ärger 🚀"), (5, "Root cause")]
    assert (3, "Zürich ±2× café still the same paragraph") in document.prose
    assert [(label.index, label.section) for label in document.labels] == [(7, "root_cause")]


def test_tight_list_items_quotes_and_setext_headings_give_their_raw_text():
    document = scanned("Title\n=====\n\n- **Root cause:** the `alloc`\n- Fix: unknown\n\n> quoted *text*\n")
    assert [(h.index, h.level, h.text) for h in document.headings] == [(0, 1, "Title")]
    assert [text for _, text in document.prose] == ["Title", "**Root cause:** the `alloc`", "Fix: unknown",
                                                    "quoted *text*"]
    assert [label.section for label in document.labels] == ["root_cause", "fix"]


def test_a_fence_left_open_at_an_unterminated_last_line_keeps_that_line_as_written():
    (block,) = scanned("# T\n\n```c\nint x;").blocks
    assert (block.index, block.tag, block.code, block.closed) == (2, "c", "int x;", False)
    (block,) = scanned("```\nx\n\n").blocks  # open to the end, ending on blank lines
    assert (block.code, block.closed) == ("x\n\n", False)
    (block,) = scanned("> ```c\n> int x;\n> ```").blocks
    assert (block.code, block.closed) == ("int x;\n", True)


def test_front_matter_and_a_table_after_a_paragraph_line_as_github_renders_it():
    document = scanned("---\ntrack: seq\nratio: 3.4\n---\n# T\n\nMeasured:\n| impl | ms |\n|---|---|\n| C | 1 |\n")
    assert document.front_matter == ("track: seq\nratio: 3.4", 2)
    (table,) = document.tables
    assert (table.line, table.header, table.rows) == (8, ("impl", "ms"), ((10, ("C", "1")),))
    assert (7, "Measured:") in document.prose


def test_front_matter_may_close_with_dots_and_an_indented_dash_line_is_not_its_end():
    assert scanned("---\ntrack: seq\n...\n# T\n").front_matter == ("track: seq", 2)
    assert scanned("---\n    ---\na: 1\n---\n# T\n").front_matter == ("    ---\na: 1", 2)
    assert scanned("---\ntrack: seq\n# never closed\n").front_matter is None


def test_content_nested_past_the_bound_is_named_by_its_line():
    assert scanned("> " * MAX_NESTING + "deep").prose == ((1, "deep"),)
    assert scanned("- " * (MAX_NESTING // 2) + "deep").prose == ((1, "deep"),)  # a list item counts two levels
    # markdown-it skips a quote's content past the bound, and in a list the rest of the document.
    document = scanned("# T\n\n" + ">" * (MAX_NESTING + 1) + " lost\n\nread\n\n" + "- " * 50_000 + "x\n\nlost\n")
    assert document.too_deep == (3, 7)
    assert [text for _, text in document.prose] == ["T", "read"]


def test_markers_inside_a_code_block_are_code_not_nesting():
    arrows, bullets = ">" * (MAX_NESTING + 20), "- " * (MAX_NESTING + 20) + "x"
    document = scanned(f"# T\n\n```text\n{arrows}\n{bullets}\n```\n\n    {arrows}\n\n> ```\n> {arrows}\n> ```\n")
    assert [block.code for block in document.blocks] == [f"{arrows}\n{bullets}\n", f"{arrows}\n", f"{arrows}\n"]
    assert document.too_deep == ()


HOSTILE = {
    "quote": ">" * 200_000 + " x", "bullets": "+ " * 100_000 + "x", "numbers": "1. " * 100_000 + "x",
    "quoted bullets": "> - " * 50_000 + "x", "deep on every line": (">" * 100_000 + " x\n") * 20,
    "indented lists": "".join("  " * i + "- x\n" for i in range(300)),
}


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_hostile_nesting_is_a_finding_not_a_recursion_error(name):
    # markdown-it-py recurses once per level in Python: unbounded, 100,000 levels would raise RecursionError.
    # The parser must hold on its own, under any size limit an operator sets (the default refuses 2 MB unread).
    reading = read_report("devs/issues/perf_hostile.md", HOSTILE[name].encode(), ReadingOptions(max_bytes=8 << 20))
    assert [f.rule for f in reading.result.findings if f.rule == "nesting"] == ["nesting"]
