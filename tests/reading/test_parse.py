"""The parser's contract: canonical reports, the tolerance cases of the spec, line numbers, and bad input."""
from __future__ import annotations

import hashlib

import pytest

from bot.core.reports.parse import parse
from tests.reports import canonical_report

PATH = "devs/issues/perf_example.md"


def record_of(text: str | bytes, path: str = PATH):
    result = parse(path, text.encode() if isinstance(text, str) else text)
    assert result.record is not None
    return result.record


def rules_of(text: str | bytes) -> list[str]:
    return [f.rule for f in parse(PATH, text.encode() if isinstance(text, str) else text).findings]


def line_of(text: str, needle: str) -> int:
    """1-based line of the first line containing `needle`."""
    return next(i for i, line in enumerate(text.split("\n"), 1) if needle in line)


# --- canonical reports --------------------------------------------------------------------------------------

def test_canonical_seq_report_gives_every_fact_from_the_front_matter():
    text = canonical_report(fix="fix/deep-match", supersedes=("perf_a", "perf_b"))
    record = record_of(text)
    assert record.facts() == {
        "slug": "perf_example", "title": "Nested matches copy the scrutinee (perf_example)", "track": "seq",
        "backend": "c", "threads": 1, "ratio": 3.4, "table_ratio": 3.4, "fix": "fix/deep-match",
        "supersedes": ["perf_a", "perf_b"], "host": None, "derived": {}, "measure": None,
    }
    assert record.has_front_matter and record.source_of("ratio") == "front-matter"
    assert [s.name for s in record.sections] == ["context", "reproduction", "measurements", "root_cause", "fix"]
    assert [(b.lang, b.section) for b in record.code_blocks] == [("language", "reproduction"), ("c", "reproduction")]
    assert parse(PATH, text.encode()).findings == ()


def test_canonical_par_report_computes_the_table_ratio_from_speedup():
    record = record_of(canonical_report(track="par", backend="cuda", threads=32, ratio=6.0))
    assert (record.track, record.backend, record.threads, record.ratio) == ("par", "cuda", 32, 6.0)
    assert record.table_ratio == pytest.approx(6.0)
    assert [m.threads for m in record.measurements] == [1, 32]
    assert "cuda" in {b.lang for b in record.code_blocks}


def test_line_numbers_count_front_matter_lines():
    text = canonical_report()
    record = record_of(text)
    assert record.line_of("ratio") == line_of(text, "ratio:") == 5
    assert record.line_of("title") == line_of(text, "# Nested")
    assert record.section("root_cause").line == line_of(text, "## Root cause")
    assert record.blocks("c")[0].line == line_of(text, "```c")
    assert [m.line for m in record.measurements] == [line_of(text, "| bend |"), line_of(text, "| C (gcc")]


def test_slug_path_and_content_hash():
    text = canonical_report("perf_deep_match")
    record = record_of(text, "devs/issues/perf_deep_match.md")
    assert record.slug == "perf_deep_match"
    assert record.content_hash == hashlib.sha256(text.encode()).hexdigest()
    assert record_of(text, "/tmp/checkout/devs/issues/perf_deep_match.md").slug == "perf_deep_match"


def test_prose_words_exclude_code_tables_front_matter_and_headings():
    base = record_of(canonical_report()).prose_words
    assert record_of(canonical_report(extra_prose="one two three")).prose_words == base + 3
    with_code = canonical_report(extra_prose="```c\nint a b c d e f g;\n```")
    assert record_of(with_code).prose_words == base


# --- prose facts (no front matter) --------------------------------------------------------------------------

PROSE_ONLY = """# Nested matches copy the scrutinee

## Context
Bend is 3.4x slower than C on nested matches.

## Reproduction
```bend
def main():
  return 1
```
```c
int main(void) { return 1; }
```

## Root cause
unknown

## Fix
unknown
"""


def test_no_front_matter_takes_facts_from_prose():
    record = record_of(PROSE_ONLY)
    assert not record.has_front_matter
    assert (record.track, record.backend, record.threads, record.ratio) == ("seq", "c", 1, 3.4)
    assert record.source_of("ratio") == "prose" and record.line_of("ratio") == 4
    assert record.source_of("backend") == "default"


@pytest.mark.parametrize("sentence, track, ratio, threads", [
    ("C is 9.8x faster.", "seq", 9.8, 1),
    ("C is 9.8X faster here.", "seq", 9.8, 1),
    ("The C translation (gcc -O2) is ~9.8x faster.", "seq", 9.8, 1),
    ("3.4x slower than C.", "seq", 3.4, 1),
    ("Bend is 3,4× slower than the 1-to-1 C translation.", "seq", 3.4, 1),
    ("speedup 1.9x on 8 threads", "par", 4.21, 8),
    ("1.9x speedup with 8 threads", "par", 4.21, 8),
    ("The speedup is only 1,9× with 8 threads.", "par", 4.21, 8),
    ("We measured a speedup of 2x.\n\nThe machine runs it on 16 tomes.", "par", 8.0, 16),
    ("It is only 4x faster on 32 threads.", "par", 8.0, 32),
])
def test_prose_ratio_forms(sentence, track, ratio, threads):
    record = record_of(f"# Title\n\n{sentence}\n")
    assert (record.track, record.threads) == (track, threads)
    assert record.ratio == pytest.approx(ratio, abs=0.005)


@pytest.mark.parametrize("sentence", ["Ratio: 12.3×", "**Ratio:** 12.3x", "The ratio is 12.3.", "ratio = 12,3X"])
def test_ratio_label_in_prose(sentence):
    assert record_of(f"# Title\n\n{sentence}\n").ratio == 12.3


@pytest.mark.parametrize("sentence, backend", [
    ("A speedup of 2x on 8 threads on Metal.", "metal"),
    ("A speedup of 2x on 8 threads with CUDA.", "cuda"),
    ("A speedup of 2x on 8 threads on an NVIDIA GPU.", "cuda"),
    ("A speedup of 2x on 8 threads on the GPU.", "cuda"),
    ("A speedup of 2x on 8 threads.", "c"),
    ("A speedup of 2x on 8 threads, on bare metal.", "c"),
    ("C is 5x faster, even though the GPU is idle.", "c"),  # seq is always the C backend
])
def test_backend_inference(sentence, backend):
    assert record_of(f"# Title\n\n{sentence}\n").backend == backend


def test_track_inferred_from_wording_and_table():
    assert record_of("# T\n\nThe parallel version does not scale.\n").track == "par"
    assert record_of("# T\n\nMuch slower than the C version.\n").track == "seq"
    assert record_of("# T\n\nNothing to see.\n").track is None


def test_front_matter_wins_over_prose():
    text = canonical_report(ratio=3.4, extra_prose="C is 9.8x faster in another run.")
    assert record_of(text).ratio == 3.4


def test_unclosed_front_matter_is_reported_and_label_lines_still_count():
    text = "---\ntrack: seq\nratio: 3.4\n# Title\n\nbody\n"
    result = parse(PATH, text.encode())
    assert [(f.rule, f.line) for f in result.findings] == [("front-matter", 1)]
    assert "never closed" in result.findings[0].message
    assert (result.record.track, result.record.ratio) == ("seq", 3.4)


# --- headings and label paragraphs ---------------------------------------------------------------------------

SYNONYMS = {
    "context": ["Context", "Background", "Summary", "Overview", "Problem", "Description"],
    "reproduction": ["Reproduction", "Repro", "Minimal reproduction", "Minimal repro", "Reproducer",
                     "Steps to reproduce", "Program", "Programs", "Code", "Test case"],
    "measurements": ["Measurements", "Measurement", "Results", "Benchmark", "Benchmarks", "Timings", "Numbers",
                     "Data"],
    "root_cause": ["Root cause", "Cause", "Why", "Analysis", "Diagnosis", "Root-cause"],
    "fix": ["Fix", "Proposed fix", "Suggested fix", "Solution", "Remedy", "Patch", "Fix proposal", "Possible fix"],
}


@pytest.mark.parametrize("name, heading", [(n, h) for n, hs in SYNONYMS.items() for h in hs])
@pytest.mark.parametrize("spell", [
    lambda h: f"## {h}", lambda h: f"## {h.upper()}", lambda h: f"### {h.lower()}:", lambda h: f"## 2. {h}",
    lambda h: f"# {h}", lambda h: f"## **{h}**",
], ids=["h2", "upper", "h3-colon", "numbered", "h1-after-title", "bold"])
def test_heading_synonyms(name, heading, spell):
    written = spell(heading)
    record = record_of(f"# Title\n\n{written}\n\nsome text\n")
    assert record.title == "Title"
    section = record.section(name)
    assert section is not None and section.text == "some text" and section.line == 3


def test_section_ends_at_next_heading_of_same_level_but_not_at_subheadings():
    text = "# T\n\n## Reproduction\n\n### Bend\n\n```bend\ndef main():\n  return 1\n```\n\n## Notes\n\nfree text\n"
    record = record_of(text)
    assert record.section("reproduction").text.startswith("### Bend")
    assert "free text" not in record.section("reproduction").text
    assert record.code_blocks[0].section == "reproduction"


@pytest.mark.parametrize("lines", [
    "**Root cause:** unknown\n**Fix:** unknown",
    "Root cause: unknown\n\nFix: unknown",
    "**Root cause**: unknown\n\n- Fix: unknown",
])
def test_label_paragraphs_open_sections(lines):
    record = record_of(f"# Title\n\n{lines}\n")
    assert record.section("root_cause").text == "unknown" and record.section("root_cause").is_unknown
    assert record.section("fix").text == "unknown"


def test_label_does_not_replace_a_heading_section():
    text = "# T\n\n## Fix\n\nuse a jump table\n\n## Context\n\nFix: unknown\n"
    assert record_of(text).section("fix").text == "use a jump table"


def test_first_h1_is_the_title_even_when_it_starts_with_a_section_word():
    record = record_of("# Fix: nested matches copy\n\n## Fix\n\nunknown\n")
    assert record.title == "Fix: nested matches copy" and record.section("fix").text == "unknown"


# --- code blocks ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("tag, lang", [
    ("bend", "language"), ("hvm", "language"), ("hvm2", "language"), ("hvm3", "language"), ("hvm4", "language"),
    ("hvml", "language"), ("bend2", "language"), ("BEND", "language"), ("bend title=x", "language"),
    ("{.bend .numberLines}", "language"), ("c", "c"), ("C", "c"), ("h", "c"), ("c99", "c"), ("c11", "c"),
    ("gnu c", "c"), ("{.c}", "c"), ("cuda", "cuda"), ("cu", "cuda"), ("metal", "metal"), ("msl", "metal"),
    ("python", "other"), ("cpp", "other"),
])
def test_fence_tags_normalise(tag, lang):
    record = record_of(f"# T\n\n```{tag}\nx = 1\n```\n")
    assert record.code_blocks[0].lang == lang


@pytest.mark.parametrize("code, lang", [
    ("#include <stdio.h>\nint x;", "c"),
    ("int main(void) { return 0; }", "c"),
    ("def main():\n  return 1", "language"),
    ("def sum(a, b):\n  return a + b", "language"),
    ("__global__ void k() {}", "cuda"),
    ("#include <metal_stdlib>", "metal"),
    ("echo hello", "other"),
])
def test_untagged_blocks_are_classified_by_content(code, lang):
    fenced = record_of(f"# T\n\n```\n{code}\n```\n").code_blocks[0]
    indented = record_of("# T\n\n" + "".join(f"    {line}\n" for line in code.split("\n"))).code_blocks[0]
    assert (fenced.lang, fenced.tag, indented.lang) == (lang, "", lang)


@pytest.mark.parametrize("fence", ["~~~bend\ndef main():\n  return 1\n~~~",
                                   "````bend\n```\ndef main():\n  return 1\n````",
                                   "```Bend title=\"sum\"\ndef main():\n  return 1\n```"])
def test_odd_fences_are_closed_blocks(fence):
    result = parse(PATH, f"# T\n\n{fence}\n\nafter\n".encode())
    block = result.record.code_blocks[0]
    assert (block.lang, block.closed, block.line) == ("language", True, 3)
    assert "def main():" in block.code
    assert "fence-unclosed" not in [f.rule for f in result.findings]


@pytest.mark.parametrize("fence", ["```bend\ndef main():", "~~~c\nint x;\n```", "````c\nint x;\n```\n"])
def test_unclosed_fence_is_recorded_and_reported(fence):
    result = parse(PATH, f"# T\n\ntext\n\n{fence}\n".encode())
    block = result.record.code_blocks[0]
    assert block.closed is False
    unclosed = [f for f in result.findings if f.rule == "fence-unclosed"]
    assert [f.line for f in unclosed] == [5] and "line 5" in unclosed[0].message


# --- measurements table --------------------------------------------------------------------------------------

def table_report(table: str, front: str = "") -> str:
    return f"{front}# T\n\n## Measurements\n\n{table}\n"


@pytest.mark.parametrize("header, cell, seconds", [
    ("time", "1.2 s", 1.2), ("time", "850 ms", 0.85), ("time", "12µs", 12e-6), ("wall", "0.9s", 0.9),
    ("time (ms)", "850", 0.85), ("runtime (s)", "2", 2.0), ("median (us)", "5", 5e-6), ("seconds", "3", 3.0),
    ("mean", "1,5 s", 1.5), ("time", "1,234 ms", 1.234), ("time", "n/a", None),
])
def test_time_units_from_header_or_cell(header, cell, seconds):
    record = record_of(table_report(f"| impl | {header} |\n|---|---|\n| bend | {cell} |"))
    assert record.measurements[0].seconds == (pytest.approx(seconds) if seconds is not None else None)


def test_column_synonyms_and_row_kinds():
    table = ("| Variant | Host | Median (ms) | Cores | Cmd |\n|---|---|---|---|---|\n"
             "| HVM4 | m1 | 340 | 1 | `hvm run x` |\n| clang -O3 | m1 | 100 | 1 | `./a.out` |\n"
             "| C (gcc) | m1 | 110 | 1 | `./b.out` |\n| other | m1 | 1 | 1 | x |")
    rows = record_of(table_report(table)).measurements
    assert [(r.label, r.impl, r.threads, r.machine, r.command) for r in rows] == [
        ("HVM4", "language", 1, "m1", "hvm run x"), ("clang -O3", "c", 1, "m1", "./a.out"),
        ("C (gcc)", "c", 1, "m1", "./b.out"), ("other", "", 1, "m1", "x"),
    ]
    assert record_of(table_report(table)).table_ratio == 3.4  # best language row / best C row


def test_seq_table_ratio_without_front_matter_infers_track_and_ratio():
    table = "| impl | time |\n|---|---|\n| bend | 3.0 s |\n| bend | 2.0 s |\n| C | 0.5 s |\n| C | 0.6 s |"
    record = record_of(table_report(table))
    assert (record.track, record.ratio, record.source_of("ratio")) == ("seq", 4.0, "table")


def test_par_table_ratio_uses_stated_threads_else_largest():
    table = ("| impl | time | threads |\n|---|---|---|\n| bend | 8 s | 1 |\n| bend | 2 s | 8 |\n"
             "| bend | 1.6 s | 16 |")
    record = record_of(table_report(table))
    assert (record.track, record.threads, record.table_ratio) == ("par", 16, 3.2)  # 16 / (8 / 1.6)
    stated = record_of(table_report(table, "---\ntrack: par\nbackend: c\nthreads: 8\nratio: 2\n---\n"))
    assert (stated.threads, stated.table_ratio) == (8, 2.0)  # 8 / (8 / 2)


def test_table_outside_a_measurements_section_is_used_when_it_has_times():
    record = record_of("# T\n\n| impl | time |\n|---|---|\n| bend | 2 s |\n| C | 1 s |\n")
    assert record.table_ratio == 2.0
    assert record_of("# T\n\n| a | b |\n|---|---|\n| 1 | 2 |\n").measurements == ()


# --- line endings, encodings, empty files, front matter errors ---------------------------------------------------

@pytest.mark.parametrize("newline", ["\r\n", "\r"])
def test_crlf_and_lone_cr_parse_like_lf(newline):
    text = canonical_report()
    lf = record_of(text)
    other = record_of(text.replace("\n", newline))
    assert other.facts() == lf.facts() and other.lines == lf.lines
    assert other.sections == lf.sections and other.code_blocks == lf.code_blocks
    assert other.content_hash == lf.content_hash


def test_bom_is_dropped():
    text = canonical_report()
    assert record_of(b"\xef\xbb\xbf" + text.encode()) == record_of(text)


def test_invalid_utf8_is_replaced_and_reported_at_its_line():
    result = parse(PATH, b"# T\r\n\r\nbad \xff\xfe here\n")
    assert [(f.rule, f.line) for f in result.findings] == [("encoding", 3)]
    assert "0xff" in result.findings[0].message
    assert result.record is not None and result.record.title == "T"


@pytest.mark.parametrize("data", [b"", b"   \n\t\r\n", b"\xef\xbb\xbf", b"\n\n\n"])
def test_empty_file_has_no_record(data):
    result = parse(PATH, data)
    assert result.record is None and [f.rule for f in result.findings] == ["empty"]


@pytest.mark.parametrize("front, line, words", [
    ("track: seq\nratio: [3.4\n", 4, "not valid YAML"),
    ("track: seq\n  ratio: 3.4\n", 3, "not valid YAML"),
    ("- track\n- seq\n", 2, "not a mapping"),
    ("just text\n", 2, "not a mapping"),
])
def test_front_matter_errors_name_the_line(front, line, words):
    result = parse(PATH, f"---\n{front}---\n# T\n".encode())
    (finding,) = [f for f in result.findings if f.rule == "front-matter"]
    assert finding.line == line and words in finding.message


def test_front_matter_key_and_value_findings():
    text = "---\ntrak: seq\nratio: 3.4x\nthreads: 0\nbackend: gpu\nsupersedes: [perf_a.md]\n---\n# T\n"
    result = parse(PATH, text.encode())
    found = {(f.rule, f.line): f for f in result.findings}
    assert "did you mean `track`" in found["front-matter-key", 2].remedy
    assert "'3.4x'" in found["front-matter-value", 3].message
    assert "`ratio: 3.4`" in found["front-matter-value", 3].remedy
    assert "'0'" in found["front-matter-value", 4].message
    assert "`backend: cuda`" in found["front-matter-value", 5].remedy
    assert "`perf_a`" in found["front-matter-value", 6].remedy
    assert result.record.unknown_keys == ("trak",)


def test_tolerated_front_matter_spellings():
    record = record_of("---\ntrack: SEQ\nbackend: C\nthreads: '1'\nratio: '3.5'\nfix: 0123abc\n---\n# T\n")
    assert (record.track, record.backend, record.threads, record.ratio, record.fix) == ("seq", "c", 1, 3.5, "0123abc")


def test_yaml_document_end_marker_closes_front_matter():
    record = record_of("---\ntrack: seq\nratio: 3.4\n...\n# T\n")
    assert record.has_front_matter and record.ratio == 3.4 and record.title == "T"


def test_facts_in_hard_wrapped_sentences_are_read():
    text = ("# Loops re-expand their body\n\n## Context\n\nOn mac-mini-m2-1 the 1-to-1 C\ntranslation is 66x "
            "faster than the same loop\nin the language.\n")
    record = parse("devs/issues/perf_wrapped.md", text.encode()).record
    assert (record.track, record.ratio, record.line_of("ratio")) == ("seq", 66.0, 5)
