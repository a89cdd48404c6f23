"""A sweep that varies nothing is a configuration error, and a speedup past the ideal is no clean verdict: the
pthreads runtime of tests/sweep_project.py, built for real, its verdicts decided on the span it prints (a count)."""
from __future__ import annotations

import dataclasses
import json

import pytest
from click.testing import CliRunner

from bot.adapters.runners.local import LocalRunner
from bot.adapters.store.bench import bench_store
from bot.cli import main
from bot.core.config import parse_repo_config
from bot.core.reports.parse import parse
from bot.core.verify import verdict_words as words
from bot.core.verify.stats import Interval
from bot.core.verify.sweep_checks import IMPLAUSIBLE, knob_problem, plausible_step, same_points
from bot.errors import UserError
from bot.services.bench.verify import verify
from tests.flows import local_bot
from tests.gitrepo import RepoBuilder
from tests.sweep_project import REPORTS, SWEEP_CONFIG, SWEEP_RUNTIME

NO_KNOB = SWEEP_CONFIG.replace('language = ["./runtime", "{file}", "--threads", "{threads}"]',
                               'language = ["./runtime", "{file}"]')
# A runtime that reads `--workers`, told `--threads`: it runs one thread at every count, and says so.
PRINTS_THREADS = SWEEP_RUNTIME.replace('printf("checksum %lu of %d items\\n- SPAN: %lu\\n", total, items, span);',
                                       'printf("checksum %lu of %d items\\n- SPAN: %lu\\n- THREADS: %d\\n", total, '
                                       'items, span, threads);') \
    .replace('!strcmp(argv[a], "--threads")', '!strcmp(argv[a], "--workers")')
WITH_THREADS_METRIC = SWEEP_CONFIG.replace('span = "- SPAN: ([0-9]+)"}',
                                           'span = "- SPAN: ([0-9]+)", threads = "- THREADS: ([0-9]+)"}')
# A runtime whose span shrinks with the square of the threads: 4x on 2 threads, which no program can be.
SUPERLINEAR = SWEEP_RUNTIME.replace('printf("checksum %lu of %d items\\n- SPAN: %lu\\n", total, items, span);',
                                    'printf("checksum %lu of %d items\\n- SPAN: %lu\\n", total, items, '
                                    'span / (unsigned long)threads);')
assert PRINTS_THREADS.count("THREADS: %d") == 1 and "--workers" in PRINTS_THREADS and "span / (unsigned" in SUPERLINEAR
assert "threads = " in WITH_THREADS_METRIC and '"{file}"]' in NO_KNOB


def project(root, runtime: str = SWEEP_RUNTIME, config: str = SWEEP_CONFIG) -> RepoBuilder:
    repo = RepoBuilder(root, branch="main")
    repo.write("runtime.c", runtime).write(".perfbot.toml", config)
    for slug, text in REPORTS.items():
        repo.write(f"devs/issues/{slug}.md", text)
    main = repo.commit("a pthreads runtime and two workloads")
    repo.repo.git.checkout("-q", "-b", "fix/dynamic-items", main)  # the irregular report's fix
    repo.write("runtime.c", "#define DYNAMIC 1\n" + runtime).commit("runtime: hand items out one by one")
    repo.repo.git.checkout("-q", "main")
    return repo


def record(slug: str = "perf_balanced_items"):
    return parse(f"devs/issues/{slug}.md", REPORTS[slug].encode()).record


def test_a_par_command_without_a_thread_knob_is_named_before_anything_runs():
    config = parse_repo_config(NO_KNOB)
    problem = knob_problem(record(), config, "[run] language (.perfbot.toml:7)")
    assert problem is not None and "{threads}" in problem and "[run] language (.perfbot.toml:7)" in problem
    assert "PAR report" in problem and "1 thread against 2 threads" in problem
    assert knob_problem(record(), parse_repo_config(SWEEP_CONFIG)) is None
    seq = dataclasses.replace(record(), track="seq")
    assert knob_problem(seq, config) is None  # nothing is swept
    gpu = dataclasses.replace(record(), backend="cuda")
    forced = ("./runtime", "--gpu", "{file}")
    gpu_config = config.model_copy(update=dict(gpu=config.gpu.model_copy(update={"run": forced})))
    assert "GPU report" in knob_problem(gpu, gpu_config)
    one_cpu = gpu_config.model_copy(update=dict(gpu=gpu_config.gpu.model_copy(update={"against_best_cpu": False})))
    assert knob_problem(gpu, one_cpu) is None  # the GPU against one CPU thread sweeps no count


def test_identical_points_are_a_configuration_error():
    same = {1: ["./runtime", "p"], 2: ["./runtime", "p"]}
    assert "runs the same command (./runtime p)" in same_points(same, {})
    differ = {1: ["./runtime", "-T1"], 2: ["./runtime", "-T2"]}
    assert same_points(differ, {1: {"threads": 1.0}, 2: {"threads": 2.0}}) is None
    said = same_points(differ, {1: {"threads": 1.0, "span": 9.0}, 2: {"threads": 1.0, "span": 9.0}})
    assert said is not None and said.startswith("the runtime printed threads 1 at every thread count")
    assert same_points(differ, {1: {"span": 9.0}, 2: {"span": 9.0}}) is None  # equal work is a verdict, not this
    three = {1: ["./rt", "-T1"], 2: ["./rt", "-T2"], 4: ["./rt", "-T4"]}
    clamped = same_points(three, {1: {"workers": 1.0}, 2: {"workers": 2.0}, 4: {"workers": 2.0}})
    assert clamped is not None and clamped.startswith("the runtime printed workers 2 at thread counts 2 and 4")
    assert same_points(three, {1: {"workers": 1.0}, 2: {"workers": 2.0}, 4: {"workers": 4.0}}) is None


def test_a_speedup_past_the_ideal_samples_to_the_budget_then_is_implausible():
    crossing = Interval(1.8, 1.95, 2.3)
    assert plausible_step("pass", crossing, 2, 5, 30) == "sample"
    assert plausible_step("pass", crossing, 2, 30, 30) == IMPLAUSIBLE
    assert plausible_step("pass", Interval(1.9, 2.0, 2.0), 2, 5, 30) == "pass"  # exactly ideal is plausible
    told = words.answer("reproduce", IMPLAUSIBLE)
    assert told.said == "implausible: above ideal, noisy or mismeasured" and told.tone == words.UNSURE


@pytest.fixture
def perfbot(tmp_path, monkeypatch):
    monkeypatch.setenv("PERFBOT_INSTANCE_DIR", str(tmp_path / "instance"))
    runner = CliRunner()
    return lambda *args: runner.invoke(main, list(args), catch_exceptions=False)


def test_check_warns_and_verify_refuses_a_sweep_without_threads(tmp_path, perfbot):
    repo = project(tmp_path / "runtime", config=NO_KNOB)
    line = next(n for n, text in enumerate(NO_KNOB.splitlines(), 1) if text.startswith("language = "))
    checked = perfbot("check", "--repo", str(repo.root))
    assert "warning: perf_balanced_items is a PAR report" in checked.output
    assert f"[run] language (.perfbot.toml:{line})" in checked.output and "{threads}" in checked.output
    verified = perfbot("verify", "perf_balanced_items", "--repo", str(repo.root), "--head", "main",
                       "--db", f"sqlite:///{tmp_path / 'v.sqlite3'}")
    assert verified.exit_code == 1, verified.output
    assert "{threads}" in verified.output and f"[run] language (.perfbot.toml:{line})" in verified.output
    assert "speedup" not in verified.output.split("error:")[0]  # nothing was measured


def test_a_runtime_that_prints_one_thread_at_every_count_is_refused(tmp_path):
    repo = project(tmp_path / "runtime", PRINTS_THREADS, WITH_THREADS_METRIC)
    config = parse_repo_config(WITH_THREADS_METRIC)
    runner = LocalRunner("local", repo.root, tmp_path / "cache", build=config.build.argv)
    with pytest.raises(UserError, match=r"printed threads 1 at every thread count of the sweep \(1, 2, 4\)"):
        verify(record(), config, runner, repo.repo.commit("main").hexsha)


def test_a_superlinear_span_is_reported_implausible_after_the_whole_budget(tmp_path, perfbot):
    config_text = SWEEP_CONFIG.replace("max_samples = 30", "max_samples = 6")
    assert "max_samples = 6" in config_text
    repo = project(tmp_path / "runtime", SUPERLINEAR, config_text)
    verified = perfbot("verify", "perf_balanced_items", "--repo", str(repo.root), "--head", "main", "--format",
                       "json", "--db", f"sqlite:///{tmp_path / 'v.sqlite3'}")
    assert verified.exit_code == 3, verified.output
    result = json.loads(verified.output[verified.output.index("{"):])
    head = result["sides"][-1]
    assert result["verdict"] == "implausible" and head["decision"] == "implausible"
    assert result["verdict_text"] == "implausible: above ideal, noisy or mismeasured"
    assert len(head["n_threads_seconds"]) == 6  # sampled to the budget's end, although [4, 4] decided at once
    assert head["interval"]["point"] == 4.0  # 200 / (100 / 2); at 4 threads 200 / (50 / 4)
    assert "reaches 4.00x, past the ideal 2x" in result["message"]
    assert "speedup above ideal (4.00x at 2, 16.67x at 4): noisy or mismeasured" in result["message"]


def test_the_service_answers_a_sweep_without_threads_with_an_error_not_a_verdict(tmp_path, database):
    repo = project(tmp_path / "runtime", config=NO_KNOB)
    key, queue, _tracker, services, worker = local_bot(database, repo.root, tmp_path)
    services.reports.sync_and_mirror(key, None, None)
    assert [d["id"] for d in queue.listing()] == ["bench-1"] and worker.run_once()
    run = bench_store.get_run(database, 1)
    assert (run.status, run.verdict) == ("done", "error")
    line = next(n for n, text in enumerate(NO_KNOB.splitlines(), 1) if text.startswith("language = "))
    assert "has no {threads}" in run.message and f"[run] language (.perfbot.toml:{line})" in run.message
    assert not run.measured


def test_the_dashboards_curve_clips_no_band_past_the_ideal_and_says_so():
    from bot.adapters.charts import scaling_chart

    plain = scaling_chart([("head", [(1, 1.0, 1.0, 1.0), (2, 1.7, 1.9, 2.0)])], 2, "run 1")
    assert 'aria-label="run 1"' in plain
    past = scaling_chart([("head", [(1, 1.0, 1.0, 1.0), (2, 0.7, 1.09, 3.11)])], 2, "run 2")
    assert 'aria-label="run 2; speedup above the ideal line (up to 3.11x): noisy or mismeasured"' in past


def test_a_gpu_report_compared_with_the_best_cpu_count_is_refused_without_threads(tmp_path):
    from tests.gpu_project import GPU_CONFIG
    from tests.gpu_project import REPORTS as GPU_REPORTS

    config = parse_repo_config(GPU_CONFIG.replace('language = ["./runtime", "{file}", "--threads", "{threads}"]',
                                                  'language = ["./runtime", "{file}"]'))
    gpu = parse("devs/issues/perf_metal_slower_than_cpu.md", GPU_REPORTS["perf_metal_slower_than_cpu"].encode()).record
    runner = LocalRunner("local", tmp_path, tmp_path / "cache", build=None)  # never reached: refused first
    with pytest.raises(UserError, match=r"GPU report: perfbot measures the CPU at several thread counts.*\{threads\}"):
        verify(gpu, config, runner, "0" * 40)


def test_the_service_posts_a_superlinear_sweep_as_implausible_not_as_a_verdict(tmp_path, database):
    """Item 2 through the service: the queued fix run samples to its budget and its comment, run page and record
    say implausible, with the count past the ideal; no claim is sized on it."""
    from tests.lead.test_dashboard import make_client

    repo = project(tmp_path / "runtime", SUPERLINEAR, SWEEP_CONFIG.replace("max_samples = 30", "max_samples = 5"))
    key, queue, tracker, services, worker = local_bot(database, repo.root, tmp_path)
    services.reports.sync_and_mirror(key, None, None)
    assert [d["id"] for d in queue.listing()] == ["bench-1"] and worker.run_once()
    run = bench_store.get_run(database, 1)
    assert (run.status, run.verdict) == ("done", IMPLAUSIBLE), run.message
    assert [len(side.second) for side in run.result.sides] == [5, 5]  # the whole budget, though [4, 4] decides
    assert all(side.decision == IMPLAUSIBLE for side in run.result.sides)
    assert "reaches 4.00x, past the ideal 2x" in run.message
    comments = [c["body"] for i in json.loads(tracker.state_file.read_text())["issues"].values()
                for c in i["comments"] if "perfbot:bench perf_irregular_items" in c["body"]]
    assert len(comments) == 1 and "implausible: above ideal, noisy or mismeasured" in comments[0]
    assert "fixed" not in comments[0].splitlines()[1] and "slower" not in comments[0].splitlines()[1]
    page = make_client(database, tmp_path).get("/dashboard/runs/1").get_data(as_text=True)
    assert "implausible" in page and "above ideal, noisy or mismeasured" in page
