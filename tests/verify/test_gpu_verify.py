"""GPU reports verified on a runner labelled for their backend, with a stand-in GPU runtime (no GPU here):
the GPU against one CPU thread and the best CPU count, and the automatic CPU/GPU choice against both forced
modes. The programs are real, gcc-built, and measured in the span they print, so every speedup is exact."""
from __future__ import annotations

import pytest

from bot.adapters.runners.local import LocalRunner
from bot.core.config import parse_repo_config
from bot.core.config.instance import parse_instance_config
from bot.core.reports.parse import parse
from bot.core.verify.bench_run import BenchRun, RunResult
from bot.core.verify.vocabulary import Purpose, RunStatus
from bot.core.verify.vocabulary import Test as IntervalTest
from bot.errors import UserError
from bot.services.bench.bench_flow import BenchFlow, comment_body, reproduction
from bot.services.bench.verify import verify
from tests.gpu_project import GPU_CONFIG, GPU_RUNNERS, REPORTS, build_gpu_project

SLOWER, AUTO = "perf_metal_slower_than_cpu", "perf_metal_auto_picks_cpu"


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    root = tmp_path_factory.mktemp("gpu")
    repo, heads = build_gpu_project(root / "runtime")
    config = parse_instance_config(GPU_RUNNERS)[1].narrow(parse_repo_config(GPU_CONFIG))
    records = {slug: parse(f"devs/issues/{slug}.md", text.encode()).record for slug, text in REPORTS.items()}
    conf = BenchFlow(None, None).runner_conf(config, records[SLOWER])
    runner = LocalRunner(conf.name, repo.root, root / "cache", build=config.build.argv)
    return heads, config, runner, records


def _gpu(outcome) -> dict:
    return outcome.as_dict()["sides"][-1]["gpu"]


def test_a_metal_report_runs_on_the_runner_labelled_metal_and_its_claim_reproduces(project):
    heads, config, runner, records = project
    assert runner.name == "mini-metal"
    outcome = verify(records[SLOWER], config, runner, heads["main"])
    assert outcome.verdict == "fail" and reproduction(outcome.verdict, True) == "reproduced", outcome.message
    gpu = _gpu(outcome)
    assert gpu["best_cpu"] == 2 and set(gpu["modes"]) == {"cpu 1", "cpu 2", "gpu"}
    # 100 units on one CPU thread, 50 on each of two, 200 in the main branch's kernel.
    assert {mode: row["speedup"] and row["speedup"]["point"] for mode, row in gpu["modes"].items()} == {
        "cpu 1": None, "cpu 2": 2.0, "gpu": 0.5}
    assert "against the best CPU count, 2 threads" in outcome.message and "judged against 1x" in outcome.message
    # The comment's table of modes is drawn from the stored result read back typed (run_parts, sweep_result).
    run = BenchRun(id=7, repo="o/r", slug=SLOWER, purpose=Purpose.REPRODUCE, status=RunStatus.DONE,
                   head=heads["main"], verdict=IntervalTest.FAIL, result=RunResult.from_json(outcome.as_dict()),
                   runner=runner.name)
    body = comment_body("<!-- perfbot:bench 7 -->", run, config, records[SLOWER])
    assert "**CPU and GPU, head** (best CPU count: 2 threads):" in body
    rows = [line for line in body.splitlines() if line.startswith(("| cpu ", "| gpu |"))]
    assert [row.split(" | ")[0] for row in rows] == ["| cpu 1", "| cpu 2", "| gpu"]
    assert "1.00x (the baseline)" in rows[0] and "| 2.00x [2.00, 2.00] |" in rows[1] and "| 0.50x [" in rows[2]


def test_a_fix_that_makes_the_gpu_win_passes_against_the_best_cpu_count(project):
    heads, config, runner, records = project
    outcome = verify(records[SLOWER], config, runner, heads["fix/metal-kernel"], heads["main"])
    base, head = outcome.sides
    assert (base.decision, head.decision, outcome.verdict) == ("fail", "pass", "pass"), outcome.message
    assert (base.interval.point, head.interval.point) == (0.25, 2.0)  # two CPU threads' 50 units over 200, over 25


def test_the_gpu_must_only_beat_one_thread_when_the_best_cpu_count_is_not_asked_for(project):
    heads, config, runner, records = project
    one_thread = config.model_copy(update=dict(gpu=config.gpu.model_copy(update={"against_best_cpu": False})))
    outcome = verify(records[SLOWER], one_thread, runner, heads["fix/metal-kernel"])
    assert set(_gpu(outcome)["modes"]) == {"cpu 1", "gpu"} and outcome.verdict == "pass"
    assert outcome.sides[-1].interval.point == 4.0  # 100 units on one thread over 25 on the GPU
    assert "against one CPU thread" in outcome.message


def test_auto_mode_is_judged_against_the_faster_forced_mode(project):
    heads, config, runner, records = project
    wrong = verify(records[AUTO], config, runner, heads["fix/metal-kernel"])
    assert wrong.verdict == "fail", wrong.message  # the GPU is 4x faster, auto stays on one CPU thread
    assert "faster forced mode, the GPU" in wrong.message
    assert wrong.sides[-1].interval.point == 0.25  # the GPU's 25 units over auto's 100 on one CPU thread
    assert set(_gpu(wrong)["modes"]) == {"cpu 1", "cpu 2", "gpu", "auto"}
    right = verify(records[AUTO], config, runner, heads["fix/auto-choice"])
    assert right.verdict == "pass" and right.sides[-1].interval.point == 1.0, right.message
    without = config.model_copy(update=dict(gpu=config.gpu.model_copy(update={"auto": None})))
    with pytest.raises(UserError, match=r"mode: auto.*\[gpu\] auto"):
        verify(records[AUTO], without, runner, heads["main"])


def test_gpu_settings_and_the_mode_fact_are_checked():
    from bot.core.config import ConfigFileError

    with pytest.raises(ConfigFileError, match="needs run"):
        parse_repo_config('[gpu]\nauto = ["./r", "{file}"]\n')
    with pytest.raises(ConfigFileError, match=r"gpu.min_speedup"):
        parse_repo_config('[gpu]\nrun = ["./r"]\nmin_speedup = 0\n')
    text = REPORTS[AUTO].replace("mode: auto", "mode: sometimes")
    result = parse("devs/issues/perf_x.md", text.encode())
    assert result.record.mode is None
    assert any(f.rule == "front-matter-value" and "mode: auto" in f.remedy for f in result.findings)
