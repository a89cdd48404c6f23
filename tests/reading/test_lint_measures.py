"""Lint reads a stated ratio in the measure the report names and against every language row paired with its C
row before it calls it a mismatch (issue 40); a GPU claim's missing piece is named as a row, not a thread count.

These are the development cases, made from the issue's own examples; tests/data/lint_heldout/ is the held-out
set, never tuned on (bench/lint_eval.py --set lint_heldout)."""
from __future__ import annotations

import re

from bot.core.lint.rules import lint_bytes
from bot.core.reports.parse import parse
from bot.core.reports.table_ratios import every_pair
from tests.reading.test_lint import edit
from tests.reading.test_lint_claims import GPU_TABLE, gpu_report
from tests.reports import canonical_report

PATH = "devs/issues/perf_example.md"


def findings(text: str) -> dict[str, str]:
    return {f.rule: f.message for f in lint_bytes(PATH, text.encode())}


def with_table(text: str, table: str) -> str:
    return re.sub(r"\| implementation.*?\n\n", table + "\n", text, flags=re.S)


REFERENCE = edit(canonical_report(), ("track: seq\n", "reference: runtime@v1.2\nmeasure: instructions\n"),
                 ("ratio: 3.4\n", "ratio: 1.31\n"))
INSTRUCTIONS = ("| revision | time (s) | instructions | machine |\n| --- | --- | --- | --- |\n"
                "| HEAD | 1.14 | 1000.7M | ci |\n| runtime v1.2 | 1.00 | 761.5M | ci |\n")


def test_an_instructions_claim_is_read_in_the_instructions_column_not_the_time_column():
    text = with_table(REFERENCE, INSTRUCTIONS)
    rows = parse(PATH, text.encode()).record.measurements
    assert [dict(r.counts) for r in rows] == [{"instructions": 1000.7e6}, {"instructions": 761.5e6}]
    assert "ratio-mismatch" not in findings(text)  # 1000.7M / 761.5M = 1.31; the times give 1.14
    wrong = findings(text.replace("ratio: 1.31", "ratio: 1.7"))["ratio-mismatch"]
    assert "(the report's measure is instructions)" in wrong and "gives 1.31 in its instructions column: 30% apart" \
        in wrong
    assert "the closest pair of its rows, 'HEAD' / 'runtime v1.2' in instructions = 1.31x (lines" in wrong


def test_a_user_time_column_beside_the_wall_column_is_a_measure_too():
    table = ("| implementation | wall (s) | user (s) | machine |\n| --- | --- | --- | --- |\n"
             "| bend | 0.68 | 0.66 | ci |\n| C (gcc -O2) | 0.20 | 0.15 | ci |\n")
    text = with_table(edit(canonical_report(), ("ratio: 3.4\n", "ratio: 4.4\nmeasure: user\n")), table)
    assert "ratio-mismatch" not in findings(text)  # 0.66 / 0.15 = 4.4, the wall times give 3.4


def test_every_language_row_is_paired_with_its_c_row_before_a_mismatch():
    # One language row per input size and one C row: 29.7x is the 400 row over C, the first row gives 10.8x.
    table = ("| input | runtime | time | machine |\n| --- | --- | --- | --- |\n"
             "| 0 dropped fields | bend | 0.540 s | ci |\n| 400 dropped fields | bend | 1.485 s | ci |\n"
             "| 400 dropped fields | C (gcc) | 0.050 s | ci |\n")
    text = with_table(edit(canonical_report(), ("ratio: 3.4\n", "ratio: 29.7\n")), table)
    record = parse(PATH, text.encode()).record
    assert [r.impl for r in record.measurements] == ["language", "language", "c"]  # `runtime` names the row
    assert record.table_ratio == 10.8
    assert "ratio-mismatch" not in findings(text)
    wrong = findings(text.replace("ratio: 29.7", "ratio: 18"))["ratio-mismatch"]
    assert "the closest pair of its rows, '400 dropped fields · bend' / '400 dropped fields · C (gcc)' in time = " \
           "29.7x (lines" in wrong and "39% off" in wrong
    assert "no other pair" not in wrong


def test_a_par_claim_is_only_borne_out_by_the_count_it_names():
    rows = parse(PATH, with_table(canonical_report(track="par", threads=4, ratio=2.0), (
        "| threads | time (s) | instructions |\n| --- | --- | --- |\n| 1 | 1.0 | 10G |\n| 2 | 0.6 | 10G |\n"
        "| 4 | 0.5 | 10G |\n")).encode()).record.measurements
    assert sorted(p.value for p in every_pair(rows, "par", threads=4)) == [2.0, 4.0]  # time; instructions
    assert 1.2 in [p.value for p in every_pair(rows, "par")]  # every count, when none is claimed


def test_a_gpu_report_without_a_target_row_is_told_it_lacks_a_target_not_a_thread_count():
    text = gpu_report("CUDA is fast.", GPU_TABLE.replace("| 160 |", "| 60 |"))
    found = findings(text)
    assert "threads-missing" not in found and "expected speedup" in found["ratio-missing"]
    no_baseline = gpu_report("CUDA is slow.", "| run | time (ms) | threads |\n| --- | --- | --- |\n"
                                              "| bend (C backend) | 96 | 8 |\n| bend (CUDA) | 160 | |\n"
                                              "| bend (CUDA, patched) | 20 | |\n")
    found = findings(no_baseline)
    assert "threads-missing" not in found and "no one-thread CPU row" in found["ratio-missing"]


def test_a_gpu_target_row_named_by_what_ships_beside_it():
    table = GPU_TABLE.replace("| bend (CUDA) | 160 | |\n", "| bend (CUDA, shipped kernel) | 160 | |\n"
                                                           "| bend (CUDA, coalesced loads) | 20 | |\n")
    record = parse(PATH, gpu_report("CUDA is slow.", table).encode()).record
    assert (record.claim, record.ratio) == ("gpu", 8.0)  # (640 / 20) / (640 / 160)
    assert "threads-missing" not in findings(gpu_report("CUDA is slow.", table))


def test_a_named_measure_is_read_in_its_column_only():
    # 1.14 is the time column's ratio: an instructions claim of 1.14 is not borne out by the instructions column.
    text = with_table(REFERENCE.replace("ratio: 1.31", "ratio: 1.14"), INSTRUCTIONS)
    wrong = findings(text)["ratio-mismatch"]
    assert "'HEAD' / 'runtime v1.2' in instructions = 1.31x" in wrong
    assert "ratio-mismatch" not in findings(text.replace("measure: instructions\n", ""))  # no measure: any column


def test_a_bare_c_beside_an_input_size_names_the_c_row():
    # Found by tests/data/lint_heldout_b's first run: `| 1M | C | 30 ms |` was read as a row of no
    # implementation (one letter was not a word), so no pair existed and a wrong ratio went unflagged.
    table = ("| n | implementation | median time |\n| --- | --- | --- |\n| 10k | bend | 1.80 ms |\n"
             "| 10k | C | 0.30 ms |\n| 1M | bend | 420 ms |\n| 1M | C | 30 ms |\n")
    text = with_table(edit(canonical_report(), ("ratio: 3.4\n", "ratio: 14.0\n")), table)
    assert [r.impl for r in parse(PATH, text.encode()).record.measurements] == ["language", "c"] * 2
    assert "ratio-mismatch" not in findings(text)
    wrong = findings(text.replace("ratio: 14.0", "ratio: 20.0"))["ratio-mismatch"]
    assert "the closest pair of its rows, '1M · bend' / '1M · C' in time = 14x" in wrong
