"""A PAR run's words and figures agree (issue #39): the sweep's row at the claimed count is the verdict's interval,
shown alike in the verdict table, the sweep table, the status line and the run page, rounded by the one rule
(claim_size.number); no sentence says 'below ideal' beside an efficiency whose interval reaches the target.

The results are built by the service's own `Side.as_dict` from counts (a runtime's span, never wall time) that
spread as a scheduler's would, so the plan's interval and a fresh bootstrap differ and the test can tell which
one a view shows; the comment is the real template's."""
from __future__ import annotations

from bot.core.verify.bench_run import BenchRun, RunResult
from bot.core.verify.bench_view import side_rows, status_description
from bot.core.verify.scaling import holds_text, summary, sweep_text
from bot.core.verify.scaling_view import scaling_tables
from bot.core.verify.stats import Interval, SamplingPlan, decide_at_least, ratio_interval
from bot.core.verify.sweep_result import ScalingPoint, SweepSummary
from bot.core.verify.vocabulary import Purpose, RunStatus
from bot.core.verify.vocabulary import Test as IntervalTest
from bot.services.bench.bench_flow import comment_body
from bot.services.bench.verify import Side

# Each count's span over eight runs of a program whose threads are handed uneven work from run to run.
SPANS = {1: [100, 160, 70, 140, 80, 120, 95, 105], 2: [52, 90, 35, 75, 40, 62, 50, 55],
         4: [30, 48, 20, 40, 22, 35, 27, 29]}
CLAIMED, EFFICIENCY = 2, 0.75


def par_result() -> tuple[RunResult, Side]:
    side = Side("head", "e" * 40, par=True, measure="metric:span", against=f"{CLAIMED} threads",
                sweep_rules=(CLAIMED, EFFICIENCY, 0.5), sweep={n: list(v) for n, v in SPANS.items()})
    side.language, side.c = side.sweep[1], side.sweep[CLAIMED]
    step, interval = SamplingPlan(maximum=8).next_step(side.language, side.c, CLAIMED * EFFICIENCY, decide_at_least)
    side.interval, side.decision = interval, step
    return RunResult((side.stored(),), verdict=step), side


def finished(result: RunResult) -> BenchRun:
    return BenchRun(id=9, repo="o/r", slug="perf_uneven", purpose=Purpose.REPRODUCE, status=RunStatus.DONE,
                    head="e" * 40, verdict=IntervalTest.INCONCLUSIVE, result=result, runner="local")


def rendered(result: RunResult) -> str:
    return comment_body("<!-- perfbot:bench 9 -->", finished(result), None, None)


def test_the_claimed_row_of_the_sweep_is_the_verdicts_interval_everywhere():
    result, side = par_result()
    decided = side.interval
    assert decided is not None and side.decision == "inconclusive"
    fresh = ratio_interval(SPANS[1], SPANS[CLAIMED], seed=CLAIMED)  # what the sweep computed on its own before
    assert (round(fresh.low, 2), round(fresh.high, 2)) != (round(decided.low, 2), round(decided.high, 2))
    [verdict_row] = side_rows(result)
    [table] = scaling_tables(result)
    claimed_row = next(r for r in table.rows if r.claimed)
    assert claimed_row.speedup == (decided.low, decided.point, decided.high)
    assert verdict_row.ratio_text == claimed_row.speedup_text == "1.92x [1.18, 3.11]"
    body = rendered(result)
    header = next(line for line in body.splitlines() if line.startswith("| head |"))
    swept = next(line for line in body.splitlines() if line.startswith(f"| {CLAIMED} (claimed) |"))
    assert "1.92x [1.18, 3.11]" in header and "1.92x [1.18, 3.11]" in swept
    assert body.count("[1.18, 3.11]") == 2 and "[1.36, 2.67]" not in body
    assert status_description(finished(result)).count("1.92x [1.18, 3.11]") == 1


def test_no_below_ideal_sentence_beside_an_efficiency_whose_interval_reaches_it():
    result, _ = par_result()
    body = rendered(result)
    label = next(line for line in body.splitlines() if line.startswith("**Scaling, head**"))
    assert "below" not in label
    assert "undecided at 2 threads (0.96 [0.59, 1.56]), 4 threads (0.87 [0.61, 1.21])" in label
    assert "0.96 [0.59, 1.56]" in next(line for line in body.splitlines() if line.startswith("| 2 (claimed) |"))
    swept = result.sides[0].sweep
    assert swept is not None and "below" not in sweep_text(swept)


def sweep_of(efficiencies: dict[int, tuple[float, float, float]]) -> SweepSummary:
    """A sweep whose counts have these efficiency intervals (a speedup is N times its count's efficiency)."""
    points = tuple(ScalingPoint(n, 1.0, 8, Interval(lo * n, pt * n, hi * n))
                   for n, (lo, pt, hi) in efficiencies.items())
    return SweepSummary(tuple(efficiencies), CLAIMED, EFFICIENCY, 0.5, points=points)


def test_each_count_is_said_as_its_interval_decides():
    whole = (1.0, 1.0, 1.0)
    assert holds_text(sweep_of({1: whole, 2: (0.9, 0.95, 1.0), 4: (0.8, 0.85, 0.9)})) == \
        "holds 0.75 of ideal up to 4 threads"
    assert holds_text(sweep_of({1: whole, 2: (0.5, 0.55, 0.6), 4: (0.3, 0.35, 0.4)})) == \
        "below 0.75 of ideal from 2 threads on"
    assert holds_text(sweep_of({1: whole, 2: (0.8, 0.9, 1.0), 4: (0.5, 0.97, 1.2), 8: (0.3, 0.4, 0.5)})) == \
        ("holds 0.75 of ideal up to 2 threads; below it from 8 threads on; undecided at 4 threads "
         "(0.97 [0.50, 1.20]): its interval reaches across 0.75")
    assert holds_text(sweep_of({1: whole, 2: (0.5, 0.6, 0.7), 4: (0.6, 0.8, 0.9), 8: (0.4, 0.5, 0.6)})) == \
        ("below 0.75 of ideal at 2, 8 threads; undecided at 4 threads (0.80 [0.60, 0.90]): its interval "
         "reaches across 0.75")
    assert holds_text(sweep_of({1: whole})) == "one thread only: no efficiency to judge"


def test_a_summary_without_the_verdicts_interval_keeps_its_own():
    kept = summary({n: list(v) for n, v in SPANS.items()}, CLAIMED, EFFICIENCY)
    point = next(p for p in kept.points if p.threads == CLAIMED).speedup
    assert point == ratio_interval(SPANS[1], SPANS[CLAIMED], seed=CLAIMED)
