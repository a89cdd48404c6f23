"""The mermaid perfbot writes for GitHub, read back as numbers for the dashboard to draw
(core/lead/mermaid_charts.py)."""
from __future__ import annotations

import statistics

import pytest

from bot.core.lead.mermaid_charts import PieChart, XYChart, parse
from bot.core.verify import bench_view
from bot.core.verify.run_parts import RunResult
from tests.lead.test_dashboard_data import _side, digest_body


def blocks(text: str) -> list[str]:
    return [part.split("```", 1)[0] for part in text.split("```mermaid\n")[1:]]


def test_every_chart_of_a_digest_reads_back_as_the_numbers_it_was_written_from():
    pie, fixes, milestones = [parse(block) for block in blocks(digest_body())]
    assert pie == PieChart("New reports by track and backend", (("par metal", 1.0), ("seq c", 2.0)))
    assert fixes == XYChart("Verified fixes: ratio before (back) and after (front), lower is better",
                            ("perf_u24_arith_boxing",), "", "ratio", 4.83, (("bar", (4.2,)), ("bar", (1.2,))))
    assert milestones.categories == ("1_seq_reports_near_c",) and milestones.series == (("bar", (50.0,)),)
    assert milestones.y_top == 100.0


@pytest.mark.parametrize("measure, scale, words", [
    (None, 1.0, "seconds"),  # stored before measures: wall seconds
    ("wall", 1.0, "seconds"), ("user", 1.0, "user seconds"),
    ("instructions", 1e8, "instructions"), ("metric:steps", 1e7, "steps"),
])
def test_a_bench_comments_chart_reads_back_too_in_its_unit(measure, scale, words):
    result = {"sides": [_side("base", "a" * 40, 0.09 * scale, 0.02 * scale, 4, "fail"),
                        _side("head", "b" * 40, 0.02 * scale, 0.018 * scale, 4, "pass")]}
    if measure:
        result["sides"] = [{**side, "measure": measure} for side in result["sides"]]
    [block] = blocks(bench_view.mermaid_chart("perf_x", RunResult.from_json(result), None))
    chart = parse(block)
    assert isinstance(chart, XYChart) and chart.title == f"perf_x: median {words}" and chart.y_label == words
    assert len(chart.categories) == len(chart.series[0][1]) == 4
    if scale > 1:  # a count is drawn whole, as it was counted
        assert chart.series[0][1][0] == round(statistics.median(result["sides"][0]["language_seconds"]))
        assert "e+" not in block


@pytest.mark.parametrize("source", [
    "",
    "graph TD\n  A --> B",  # a kind perfbot never writes
    "pie\n    \"a\" : lots",  # a value that is not a number
    "xychart-beta\n    x-axis [\"a\", \"b\"]\n    bar [1]",  # a series that does not match its axis
    "xychart-beta\n    title \"no series\"",
    "xychart-beta\n    bar [1]\n    click a call b()",  # a line perfbot never writes
])
def test_anything_else_is_not_a_chart(source):
    assert parse(source) is None
