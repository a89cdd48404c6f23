"""The block scan: line numbers, raw text and code blocks from the Rust parser's tree, and its nesting guard."""
from __future__ import annotations

import subprocess
import sys
import textwrap

from hypothesis import example, given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt
from mdit_py_plugins.front_matter import front_matter_plugin

from bot.core.scan import MAX_NESTING, scan


def scanned(text: str):
    return scan(text, text.split("\n"))


def test_lines_are_counted_in_characters_though_source_maps_count_bytes():
    document = scanned("# Über Ärger 🚀\n\nZürich ±2× café\nstill the same paragraph\n\n## Root cause\n\nRoot cause: ü\n")
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


def test_a_line_nesting_deeper_than_the_limit_is_cut_there_and_reported():
    exact = scanned("> " * MAX_NESTING + "deep")
    assert exact.too_deep == () and exact.prose == ((1, "deep"),)
    document = scanned("# T\n\n" + ">" * (MAX_NESTING + 5) + " x\n\n- " + "- " * 50_000 + "y\n")
    assert document.too_deep == (3, 5)
    assert document.prose[1] == (3, "\\>>>>> x")


def test_markers_inside_a_top_level_code_block_are_code_not_nesting():
    arrows, bullets = ">" * (MAX_NESTING + 20), "- " * (MAX_NESTING + 20) + "x"
    document = scanned(f"# T\n\n```text\n{arrows}\n{bullets}\n```\n\n    {arrows}\n\n{arrows} quoted\n")
    assert [block.code for block in document.blocks] == [f"{arrows}\n{bullets}\n", f"{arrows}\n"]
    assert document.too_deep == (10,)  # the quote outside any code block is still cut
    quoted = scanned(f"> ```\n> {arrows}\n> ```\n")  # in a quote the leading markers are the quote's: cut
    assert quoted.too_deep == (2,)


def test_hostile_nesting_does_not_crash_the_process():
    # Without the guard the native parser overflows its stack: a segfault, so this runs in a child process.
    program = textwrap.dedent("""
        import threading
        from bot.core.scan import scan
        for text in (">" * 200_000 + " x", "- " * 100_000 + "x", "1. " * 100_000 + "x", "> - " * 50_000 + "x",
                     "```\\n" + ">" * 200_000 + "\\n```", "```\\n" + "- " * 100_000, "    " + "> " * 100_000):
            worker = threading.Thread(target=scan, args=(text, text.split("\\n")))
            worker.start()
            worker.join()
        print("survived")
    """)
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=120)
    assert (done.returncode, done.stdout.strip()) == (0, "survived"), done.stderr[-2000:]


def test_pathological_markup_is_read_whole_without_crashing_the_process():
    # What the native parser was never fuzzed on: runs of inline openers, deep indentation, wide tables.
    program = textwrap.dedent("""
        from bot.core.reading import read_report
        texts = ("[" * 50_000, "[a" * 50_000 + "]" * 50_000, "*_" * 50_000 + "x" + "_*" * 50_000,
                 "[" * 50_000 + "x" + "](u)" * 50_000, "![" * 50_000, "`" * 50_000, "<div>" * 50_000,
                 "&amp;" * 100_000, "|a" * 50_000 + "\\n" + "|-" * 50_000 + "\\n",
                 "".join("  " * i + "- x\\n" for i in range(3_000)),
                 "".join("> " + "  " * i + "1. x\\n" for i in range(3_000)),
                 "".join(">" * i + " x\\n" for i in range(1, 400)), ("- " * 99 + "x\\n") * 2_000)
        for text in texts:
            read_report("devs/issues/perf_hostile.md", text.encode())
        print("survived")
    """)
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=120)
    assert (done.returncode, done.stdout.strip()) == (0, "survived"), done.stderr[-2000:]


BLOCKS = st.sampled_from([
    "# Title", "## Root cause:", "### 2. Fix", "Setext\n======", "Para line\nsecond line é", "**Ratio:** 3x",
    "- item\n- Fix: unknown", "1. one\n2. two", "> quoted\n> more", "```c\nint x;\n```", "~~~~bend\ndef main():\n~~~~",
    "    indented\n    code", "| a | b |\n|---|---|\n| 1 | 2 |", "<div>\nhtml\n</div>", "***", "中文 🚀 text",
])


@settings(max_examples=200, deadline=None)
@given(st.lists(BLOCKS, min_size=1, max_size=12))
def test_headings_and_code_agree_with_markdown_it_py_on_blank_line_separated_blocks(parts):
    text = "\n\n".join(parts) + "\n"
    tokens = MarkdownIt("commonmark").enable("table").parse(text)
    headings = [(t.map[0], int(t.tag[1:]), tokens[i + 1].content.strip())
                for i, t in enumerate(tokens) if t.type == "heading_open"]
    blocks = [(t.map[0], t.content) for t in tokens if t.type in ("fence", "code_block")]
    document = scanned(text)
    assert [(h.index, h.level, h.text) for h in document.headings] == headings
    assert [(b.index, b.code) for b in document.blocks] == blocks


FRONT_MATTER_LINES = st.sampled_from([
    "---", "----", "---x", "-- -", "...", "... ", "....", " ...", "  ---", "    ---", "\t---", "--- \t", "-----",
    "track: seq", "ratio: 3.4", "", " ", "# Title", "text",
])
# As scan used it before: with the indented-code rule on, which decides whether an indented `---` closes.
FRONT_MATTER_RULE = MarkdownIt("commonmark").use(front_matter_plugin).disable("inline")


@settings(max_examples=300, deadline=None)
@example(["---", "    ---", "a: 1", "---"])  # an indented `---` is code, not the closing line
@example(["---", "a: 1", "...", "b"])
@given(st.lists(FRONT_MATTER_LINES, min_size=1, max_size=8))
def test_front_matter_is_found_by_the_same_rule_as_mdit_py_plugins(lines):
    text = "\n".join(lines) + "\n"
    first = FRONT_MATTER_RULE.parse(text)[:1]
    expected = (first[0].content, 2) if first and first[0].type == "front_matter" else None
    assert scanned(text).front_matter == expected
