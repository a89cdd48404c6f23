"""The suite inside a verification: a fix that removes the report's slowdown but slows the suite fails."""
from __future__ import annotations

import re

import pytest

from bot.adapters.runners.local import LocalRunner
from bot.core.config import parse_repo_config
from bot.core.reports.parse import parse
from bot.core.verify.bench_run import BenchRun
from bot.core.verify.vocabulary import Purpose, RunStatus
from bot.core.verify.vocabulary import Test as IntervalTest
from bot.services.bench.bench_flow import comment_body
from bot.services.bench.verify import verify
from tests.bench_project import CONFIG, build_project, report

# The project's own suite: a pure-Python loop whose size the branch under test may change. It reports the
# steps it took rather than its time (a suite may print any cost), so a busy machine cannot move the verdict.
SUITE = """import json
n = int(open("suite_work.txt").read())
acc = steps = 0
for i in range(n):
    acc = (acc + i * i) % 16777216
    steps += 1
print(json.dumps({"loop": steps}))
"""
SUITE_CONFIG = CONFIG + '\n[suite]\ncommand = ["python3", "suite.py"]\nformat = "json"\ntolerance = 0.25\nsamples = 5\n'


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    root = tmp_path_factory.mktemp("suite-project")
    repo, heads = build_project(root / "runtime")
    base = repo.write("suite.py", SUITE).write("suite_work.txt", "300000").commit("the project's suite")
    repo.repo.git.checkout("-q", "-b", "fix-keeps-suite", heads["fix/perf_boxed_sum"])
    same = repo.write("suite.py", SUITE).write("suite_work.txt", "300000").commit("fix, suite unchanged")
    repo.repo.git.checkout("-q", "-b", "fix-slows-suite", same)
    slower = repo.write("suite_work.txt", "1500000").commit("fix, but the suite does 5x the work")
    repo.repo.git.checkout("-q", "main")
    config = parse_repo_config(SUITE_CONFIG)
    runner = LocalRunner("local", repo.root, root / "cache", build=config.build.argv, memory_mb=config.verify.memory_mb)
    record = parse("devs/issues/perf_boxed_sum.md", report().encode()).record
    return config, runner, record, base, same, slower


def test_a_fix_that_slows_the_suite_fails_and_says_which_benchmark(project):
    config, runner, record, base, _, slower = project
    outcome = verify(record, config, runner, slower, base)
    assert outcome.sides[-1].decision == "pass"  # the report's own gap is gone ...
    assert outcome.verdict == "fail" and outcome.suite.verdict == "fail"  # ... but the suite regressed
    assert [b.name for b in outcome.suite.regressions] == ["loop"] and "loop" in outcome.message
    run = BenchRun(id=1, repo="o/r", slug=record.slug, purpose=Purpose.FIX, status=RunStatus.DONE, head=slower,
                   base=base, verdict=IntervalTest(outcome.verdict), message=outcome.message, result=outcome.stored(),
                   runner="local", host="h")
    body = comment_body("<!-- m -->", run, config, record)
    assert "**Suite** (regression, tolerance 25%)" in body
    assert re.search(r"- `loop`: head/base [\d.]+x \[[\d.]+, [\d.]+\], regression", body), body


def test_a_fix_that_leaves_the_suite_alone_passes_with_the_suite_measured(project):
    config, runner, record, base, same, _ = project
    outcome = verify(record, config, runner, same, base)
    assert outcome.verdict == "pass", outcome.message
    assert outcome.suite is not None and not outcome.suite.regressions and "suite" in outcome.message
