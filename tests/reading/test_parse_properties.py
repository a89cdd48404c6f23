"""Properties: parse and lint never raise, whatever the bytes; canonical reports always lint clean."""
from __future__ import annotations

import os
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bot.core.lint.rules import RULES_BY_ID, lint
from bot.core.reports.parse import parse
from tests.reports import canonical_report

PATH = "devs/issues/perf_prop.md"
# PERFBOT_FUZZ_EXAMPLES=20000 for a deep run; the default keeps the suite fast.
SETTINGS = settings(max_examples=int(os.environ.get("PERFBOT_FUZZ_EXAMPLES", "300")), deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])

# Lines that exercise every branch of the parser: front matter, fences, headings, labels, tables, prose facts.
MARKDOWN_LINES = st.sampled_from([
    "---", "...", "----", "track: seq", "track: par", "track: [", "backend: metal", "threads: 8", "threads: -1",
    "ratio: 3.4", "ratio: 3.4x", "fix: main", "fix: fix/a..b", "supersedes: [perf_a, perf_b]", "supersedes: x",
    "  - perf_a", "key: {a: [b", "&a [*a]", "# Title", "## Context", "## 2. Root cause:", "### FIX", "# Background",
    "## Minimal repro", "Setext title", "=====", "**Root cause:** unknown", "Fix: unknown", "Ratio: 12.3×",
    "C is 9.8x faster", "3,4x slower than C", "speedup 1.9x on 8 threads", "1.9x speedup with 8 threads",
    "on 16 tomes", "on Metal", "CUDA on an nvidia GPU", "```", "```bend", "````c", "~~~", "~~~ {.c}", "```hvm4 x=1",
    "    indented code", "def main():", "  return 1", "#include <stdio.h>", "int main(void) {}",
    "| impl | time (ms) | threads |", "|---|---|---|", "| bend | 800 | 1 |", "| bend | 100 | 8 |", "| C | 1,5 s | 1 |",
    "| | | |", "| x |", "> quote ```", "- Fix: unknown", "1. item", "", " ", "\t", "\ufeff", "\x00", "\u2028",
    "9" * 5000 + " threads", "speedup " + "9" * 5000 + "x", "| bend | " + "9" * 5000 + " s | " + "9" * 5000 + " |",
    "threads: " + "9" * 5000, "ratio: 1e999",
])
NEWLINES = st.sampled_from(["\n", "\r\n", "\r"])


@st.composite
def markdownish(draw) -> str:
    lines = draw(st.lists(st.one_of(MARKDOWN_LINES, st.text(max_size=30)), max_size=40))
    return draw(NEWLINES).join(lines)


def check_invariants(data: bytes) -> None:
    result = parse(PATH, data)
    findings = lint(result, known_slugs=frozenset({"perf_a"}))
    assert (result.record is None) == ("empty" in [f.rule for f in result.findings])
    for finding in findings:
        assert finding.rule in RULES_BY_ID and finding.line >= 1 and finding.file == PATH
        assert finding.message and finding.remedy
    assert [(f.line, f.rule) for f in findings] == sorted((f.line, f.rule) for f in findings)
    if result.record is not None:
        line_count = data.count(b"\n") + data.count(b"\r") + 1
        assert all(1 <= f.line <= line_count for f in findings)
        assert all(1 <= block.line <= line_count for block in result.record.code_blocks)
        assert all(1 <= section.line <= line_count for section in result.record.sections)
        assert result.record.ratio is None or result.record.ratio > 0
        assert result.record.threads is None or result.record.threads >= 1


@SETTINGS
@given(st.text())
def test_any_text_parses_and_lints(text):
    data = text.encode("utf-8", "surrogatepass")
    check_invariants(data)
    # The record exists exactly when the text has content (a leading BOM is not content).
    assert (parse(PATH, data).record is None) == (not text.removeprefix("\ufeff").strip())


@SETTINGS
@given(st.binary())
def test_any_bytes_parse_and_lint(data):
    check_invariants(data)


@SETTINGS
@given(markdownish())
def test_markdownish_text_parses_and_lints(text):
    check_invariants(text.encode("utf-8", "surrogatepass"))


@SETTINGS
@given(markdownish(), st.sampled_from([b"\xff", b"\xc3", b"\xed\xa0\x80", b"\xef\xbb\xbf"]))
def test_markdownish_with_bad_bytes(text, junk):
    data = text.encode("utf-8", "surrogatepass")
    check_invariants(data[: len(data) // 2] + junk + data[len(data) // 2:])


@SETTINGS
@given(
    slug=st.from_regex(r"perf_[a-z0-9_]{1,20}", fullmatch=True),
    track=st.sampled_from(["seq", "par"]),
    backend=st.sampled_from(["c", "metal", "cuda"]),
    threads=st.integers(2, 256),
    ratio=st.integers(21, 5000).map(lambda n: n / 10),
    fix=st.sampled_from(["unknown", "inline", "abc1234", "fix/deep-match", "perf-fix/v2"]),
    newline=NEWLINES,
)
def test_canonical_reports_lint_clean_and_keep_their_facts(slug, track, backend, threads, ratio, fix, newline):
    if track == "seq":
        backend, threads = "c", 1
    text = canonical_report(slug, track=track, backend=backend, threads=threads, ratio=ratio, fix=fix)
    path = f"devs/issues/{slug}.md"
    result = parse(path, text.replace("\n", newline).encode())
    assert lint(result) == ()
    record = result.record
    assert (record.slug, record.track, record.backend, record.threads, record.ratio, record.fix) == (
        slug, track, backend, threads, ratio, fix)
    assert abs(record.table_ratio - ratio) / ratio < 0.01


ADVERSARIAL = {
    "huge thread count": "9" * 100_000 + " threads",
    "huge ratio": "C is " + "9" * 100_000 + "x faster",
    "digit run before x": "1," * 50_000 + "x slower than C",
    "long speedup gap": "speedup" + " " * 100_000 + "1.9x",
    "many thread flags": " ".join(["T8"] * 20_000),
    "many thread times": " ".join(["T1 0.5 s,"] * 10_000),
    "long ratio quotient": "ratio " + "1" * 5_000 + " / " + "2" * 5_000,
    "long byline": "# t\n\n" + "PAR \u00b7 " * 5_000,
    "wide thread table": "| x |" + " T1 |" * 3_000 + "\n|" + "---|" * 3_001 + "\n| bend |" + " 1 |" * 3_000,
    "huge table cells": ("| impl | time | threads |\n|---|---|---|\n"
                         "| bend | " + "9" * 100_000 + " s | " + "9" * 9_999 + " |"),
    "tiny and huge times": "| impl | time |\n|---|---|\n| bend | 1e300 |\n| C | 0.0000000001 |",
    "huge front matter numbers": "---\nthreads: " + "9" * 5000 + ".0\nratio: " + "9" * 5000 + ".0\n---\n# T\n",
    "long label": "**" + "a" * 100_000 + ":",
    "long heading": "## " + "1. " * 30_000 + "fix",
    "brace info string": "```" + "{" * 100_000 + "\nx\n```",
}


@pytest.mark.parametrize("text", ADVERSARIAL.values(), ids=ADVERSARIAL.keys())
def test_adversarial_inputs_stay_fast_and_sane(text):
    # This thread's CPU time, not wall time: waiting for a loaded core does not count. Every input takes
    # under 0.2 s quiet; catastrophic backtracking on inputs this long would take minutes, so 5 s has room.
    started = time.thread_time()
    check_invariants(text.encode())
    assert time.thread_time() - started < 5.0


def test_str_input_is_accepted_as_utf8():
    assert parse(PATH, "# T\n").record.title == "T"  # type: ignore[arg-type]  # callers sometimes hold text
