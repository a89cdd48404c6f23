"""A verdict's numbers are in the unit that was measured (core/verify/units.py): the bench comment's tables and
chart say seconds, user seconds, instructions or the runtime's own count, never seconds for a count. The results
are built by the service's own `Side.as_dict`, the comment by the real template."""
from __future__ import annotations

import re
import statistics

import pytest

from bot.core.verify.bench_run import BenchRun, RunResult
from bot.core.verify.gpu_modes import GPU
from bot.core.verify.stats import ratio_interval, speedup_interval
from bot.core.verify.units import result_unit, unit_of
from bot.core.verify.vocabulary import Purpose, RunStatus
from bot.core.verify.vocabulary import Test as IntervalTest
from bot.services.bench.bench_flow import comment_body
from bot.services.bench.verify import Side

# measure -> (the tables' column word, the chart's title and axis word)
MEASURES = {"wall": ("median s", "seconds"), "user": ("median user s", "user seconds"),
            "instructions": ("median instructions", "instructions"), "metric:steps": ("median steps", "steps")}
# What a sample is in each measure: seconds of a short program, or a count of a long one.
SCALE = {"wall": 1e-7, "user": 1e-7, "instructions": 7.0, "metric:steps": 1.0}


def samples(centre: float, measure: str, count: int = 5) -> list[float]:
    """Counts do not wobble (the point of counting); times do, a little."""
    value = centre * SCALE[measure]
    return [value] * count if SCALE[measure] >= 1 else [value * (1 + 0.01 * (i % 3 - 1)) for i in range(count)]


def seq_result(measure: str) -> RunResult:
    sides = []
    for label, sha, language in (("base", "a" * 40, 3_703_701), ("head", "b" * 40, 1_234_567)):
        side = Side(label, sha, language=samples(language, measure), c=samples(411_522, measure), measure=measure)
        side.interval, side.decision = ratio_interval(side.language, side.c), "fail" if label == "base" else "pass"
        sides.append(side.stored())
    return RunResult(tuple(sides))


def sweep_result(measure: str) -> RunResult:
    side = Side("head", "c" * 40, par=True, measure=measure, against="4 threads", sweep_rules=(4, 0.75, 0.5),
                sweep={1: samples(1_234_567, measure), 2: samples(654_321, measure), 4: samples(345_678, measure)})
    side.language, side.c = side.sweep[1], side.sweep[4]
    side.interval, side.decision = speedup_interval(side.language, side.c), "pass"
    return RunResult((side.stored(),))


def gpu_result(measure: str) -> RunResult:
    side = Side("head", "d" * 40, par=True, measure=measure, against="the GPU (against one CPU thread)",
                sweep={1: samples(1_234_567, measure)}, modes={GPU: samples(98_765, measure)},
                sweep_rules=(1, 0.75, 0.5))
    side.language, side.c = side.sweep[1], side.modes[GPU]
    side.interval, side.decision = speedup_interval(side.language, side.c), "pass"
    return RunResult((side.stored(),))


def comment(result: RunResult, slug: str = "perf_x") -> str:
    run = BenchRun(id=7, repo="o/r", slug=slug, purpose=Purpose.FIX, status=RunStatus.DONE, head="b" * 40,
                   verdict=IntervalTest.PASS, result=result, runner="local")
    return comment_body("<!-- perfbot:bench 7 -->", run, None, None)


def rows(body: str, first: str) -> list[list[str]]:
    """The cells of each row of the table whose header row starts with `| first |`."""
    lines = body.splitlines()
    start = next(n for n, line in enumerate(lines) if line.startswith(f"| {first} |"))
    table = []
    for line in lines[start:]:
        if not line.startswith("|"):
            break
        table.append([cell.strip() for cell in line.strip("|").split("|")])
    return [table[0], *table[2:]]  # the header, then the rows (the |---| line dropped)


def test_each_measure_has_its_words_and_old_results_are_wall_seconds():
    assert [(u.column, u.axis, u.counted) for u in map(unit_of, ("wall", "user", "instructions", "metric:steps"))] \
        == [("s", "seconds", False), ("user s", "user seconds", False), ("instructions", "instructions", True),
            ("steps", "steps", True)]
    old = RunResult.from_json({"sides": [{"language_seconds": [1.0]}]})
    assert unit_of(None) == unit_of("wall") == result_unit(old)
    assert result_unit(RunResult()) == unit_of("wall")  # a run that failed before its first side still has words


@pytest.mark.parametrize("measure, value, shown, text", [
    ("wall", 0.091123, "0.09112", "0.09112 s"),  # four significant digits, not four decimals
    ("wall", 1.5, "1.5", "1.5 s"),
    ("wall", 12345.6, "12,346", "12,346 s"),  # an hour-long run in whole seconds, never 1.235e+04
    ("user", 0.00012346, "0.0001235", "0.0001235 user s"),  # a short program keeps its digits
    ("instructions", 987654321.0, "987,654,321", "987,654,321 instructions"),
    ("metric:steps", 1234567.5, "1,234,568", "1,234,568 steps"),  # an even count's median: a whole count
    ("metric:span", 3.5, "3.5", "3.5 span"),  # unless rounding would change what it says
])
def test_values_are_shown_in_their_unit(measure, value, shown, text):
    unit = unit_of(measure)
    assert unit.format(value) == shown and unit.text(value) == text and unit.text(None) == ""


@pytest.mark.parametrize("measure", MEASURES)
def test_a_seq_comment_says_what_was_measured(measure):
    median, axis = MEASURES[measure]
    body = comment(seq_result(measure))
    header, base, head = rows(body, "side")
    assert header[2:4] == [f"language ({median})", f"C ({median})"]
    unit = unit_of(measure)
    assert base[2:4] == [unit.format(3_703_701 * SCALE[measure]), unit.format(411_522 * SCALE[measure])]
    assert head[2] == unit.format(1_234_567 * SCALE[measure])
    chart = body[body.index("```mermaid"):]
    assert f'title "perf_x: median {axis}"' in chart and f'y-axis "{axis}" 0 --> ' in chart
    if unit.counted:
        assert "seconds" not in body and " s)" not in body and " s |" not in body


def test_counts_are_whole_grouped_numbers_in_the_table_and_plain_integers_in_the_chart():
    body = comment(seq_result("metric:steps"))
    _, base, head = rows(body, "side")
    assert base[2:4] == ["3,703,701", "411,522"] and head[2:4] == ["1,234,567", "411,522"]
    assert "bar [3703701, 411522, 1234567, 411522]" in body  # mermaid reads numbers, not 1.235e+06
    assert not re.search(r"\d\.\d{4}\b", body.split("```mermaid")[0])  # no count printed as 1234567.0000


def test_a_wall_comment_keeps_its_words_in_four_significant_digits():
    body = comment(seq_result("wall"))
    header, base, _ = rows(body, "side")
    assert header[2:5] == ["language (median s)", "C (median s)", "language/C [95% interval]"]
    assert base[2:4] == ["0.3704", "0.04115"]
    assert 'title "perf_x: median seconds"' in body and 'y-axis "seconds"' in body


@pytest.mark.parametrize("measure", MEASURES)
def test_a_sweep_comment_says_what_each_thread_count_measured(measure):
    median, _ = MEASURES[measure]
    unit = unit_of(measure)
    body = comment(sweep_result(measure))
    assert rows(body, "side")[0][2:4] == [f"1 thread ({median})", f"N threads ({median})"]
    header, one, two, four = rows(body, "threads")
    assert header[:2] == ["threads", median]
    assert [one[1], two[1], four[1]] == [unit.format(statistics.median(samples(v, measure)))
                                         for v in (1_234_567, 654_321, 345_678)]
    assert four[0] == "4 (claimed)"


@pytest.mark.parametrize("measure", MEASURES)
def test_a_gpu_comment_says_what_each_mode_measured(measure):
    median, _ = MEASURES[measure]
    unit = unit_of(measure)
    body = comment(gpu_result(measure))
    header, cpu, gpu = rows(body, "mode")
    assert header[:2] == ["mode", median]
    assert (cpu[0], gpu[0]) == ("cpu 1", "gpu")
    assert [cpu[1], gpu[1]] == [unit.format(statistics.median(samples(v, measure))) for v in (1_234_567, 98_765)]
    if measure == "metric:steps":
        assert [cpu[1], gpu[1]] == ["1,234,567", "98,765"]


def test_the_terminal_line_uses_the_same_words():
    counted = Side("head", "b" * 40, language=[1_234_567.0] * 5, c=[411_522.0] * 5, measure="metric:steps")
    counted.interval = ratio_interval(counted.language, counted.c)
    assert "language 1,234,567 steps  C 411,522 steps  " in counted.summary("fixed")
    timed = Side("head", "b" * 40, language=[0.0911] * 5, c=[0.0203] * 5)
    timed.interval = ratio_interval(timed.language, timed.c)
    assert "language 0.0911 s  C 0.0203 s  " in timed.summary("fixed")
