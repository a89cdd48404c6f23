"""Verification end to end through the local runner, on a real C project whose fix branch really is faster."""
from __future__ import annotations

import re

import pytest

from bot.adapters.runners.base import BuildError
from bot.adapters.runners.local import LocalRunner
from bot.core.config import parse_repo_config
from bot.core.reports.parse import parse
from bot.services.bench.verify import MISMATCH, verify
from tests.bench_project import CONFIG, build_project, report


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    root = tmp_path_factory.mktemp("project")
    repo, heads = build_project(root / "runtime")
    config = parse_repo_config(CONFIG)
    runner = LocalRunner("local", repo.root, root / "cache", build=config.build.argv, memory_mb=config.verify.memory_mb)
    record = parse("devs/issues/perf_boxed_sum.md", report().encode()).record
    return heads, config, runner, record


def test_a_real_fix_passes_and_its_base_is_measured_too(project):
    heads, config, runner, record = project
    progress = []
    outcome = verify(record, config, runner, heads["fix/perf_boxed_sum"], base=heads["main"],
                     progress=lambda side, n, most: progress.append((side, n)))
    base, head = outcome.sides
    assert outcome.verdict == "pass", outcome.message
    assert base.decision == "fail" and base.interval.low > 2.0 and head.interval.high <= 2.0
    assert len(head.language) == len(head.c) >= config.verify.min_samples and base.output == head.output == "4463072"
    assert progress[0] == ("base", 1) and progress[-1][0] == "head"


def test_wall_time_is_sampled_and_its_interval_computed_whatever_the_load(project):
    """The verdicts above are decided on steps; wall time goes through the same sampling. On a shared machine
    its verdict may be anything, so this asserts what was measured, never what it concluded."""
    from tests.bench_project import WALL_CONFIG

    heads, _, runner, record = project
    config = parse_repo_config(WALL_CONFIG).with_verify(max_samples=5)
    outcome = verify(record, config, runner, heads["fix/perf_boxed_sum"], base=heads["main"])
    assert outcome.verdict in ("pass", "fail", "inconclusive"), outcome.message
    for side in outcome.sides:
        assert side.measure == "wall" and len(side.language) == len(side.c) == 5 == len(side.runs["c"])
        assert all(value > 0 for value in side.language + side.c) and side.decision in ("pass", "fail", "inconclusive")
        assert side.interval.low <= side.interval.point <= side.interval.high
    assert outcome.gain.low <= outcome.gain.point <= outcome.gain.high and "(wall time)" in outcome.message


def test_a_change_that_fixes_nothing_fails(project):
    heads, config, runner, record = project
    outcome = verify(record, config, runner, heads["not-a-fix"])
    assert outcome.verdict == "fail" and outcome.sides[-1].interval.low > 2.0


def test_a_fix_that_changes_the_output_is_caught_not_timed(project):
    heads, config, runner, record = project
    outcome = verify(record, config, runner, heads["wrong-output"])
    assert outcome.verdict == MISMATCH and "4463073" in outcome.message and outcome.sides[-1].language == []


def test_a_build_failure_and_a_timeout_give_clear_messages(project):
    heads, config, runner, record = project
    with pytest.raises(BuildError, match=r"build gcc -O2 -o runtime runtime.c at .* exited 1"):
        verify(record, config, runner, heads["broken"])
    quick = config.with_verify(timeout_seconds=1)
    outcome = verify(record, quick, runner, heads["hangs"])
    assert outcome.verdict == "error" and "ran past the 1s limit" in outcome.message


def test_builds_are_reused_per_commit(project):
    heads, _config, runner, _record = project
    first = runner.prepare(heads["main"])
    assert runner.prepare(heads["main"]) == first and (runner.cache_dir / "built" / heads["main"]).is_file()
    assert not (first / ".perfbot-built").exists()  # marks live beside the checkout, never in it


def test_a_run_over_its_memory_limit_is_contained(project, tmp_path):
    _, _, runner, _ = project
    hog = tmp_path / "hog.c"
    hog.write_text("#include <stdlib.h>\n#include <string.h>\nint main(void){char*p=malloc(1u<<30);"
                   "if(!p)return 3;memset(p,1,1u<<30);return 0;}\n")
    assert runner.run(["gcc", "-O0", "-o", str(tmp_path / "hog"), str(hog)], tmp_path, 60).ok
    small = LocalRunner("local", runner.repo_path, runner.cache_dir, build=None, memory_mb=64)
    result = small.run([str(tmp_path / "hog")], tmp_path, 10)
    assert result.returncode == 3 and not result.timed_out  # malloc refused under the 64 MB cap


ESCAPING_TRANSLATION = r"""#include <stdio.h>
#include <stdlib.h>
int main(void) {
  FILE *f = fopen("../../escaped.txt", "w"); if (f) { fputs("out", f); fclose(f); }
  remove("../../runtime");  /* the shared build of this commit */
  FILE *g = fopen("../../runtime.c", "a"); if (g) { fputs("/* tampered */", g); fclose(g); }
  unsigned acc = 0;
  for (unsigned long i = 0; i < %d; i++) acc = (acc + ((unsigned)(i * i) & 0xFFFFFF)) & 0xFFFFFF;
  printf("%%u\n", acc);
  printf("- STEPS: %d\n");
  return 0;
}"""


def test_a_report_whose_code_tries_to_escape_its_folder_is_contained(project):
    heads, config, runner, _record = project
    from tests.bench_project import N

    text = report().split("```c\n", 1)
    hostile = parse("devs/issues/perf_boxed_sum.md",
                    (text[0] + "```c\n" + ESCAPING_TRANSLATION % (N, N)
                     + text[1][text[1].index("\n```"):]).encode()).record
    outcome = verify(hostile, config.with_verify(max_samples=5), runner, heads["fix/perf_boxed_sum"])
    workspace = runner.prepare(heads["fix/perf_boxed_sum"])
    assert outcome.verdict == "pass", outcome.message  # measured, as if nothing happened
    assert (workspace / "runtime").exists() and "tampered" not in (workspace / "runtime.c").read_text()
    assert not (workspace / "escaped.txt").exists() and not (workspace.parent / "escaped.txt").exists()


def test_hostile_slugs_never_become_paths(project):
    _, _, runner, _ = project
    from bot.errors import UserError

    with pytest.raises(UserError):
        runner.run_dir(runner.cache_dir, "../../etc")


def test_the_verify_command_checks_the_reports_own_fix_by_default(tmp_path, monkeypatch):
    import json

    from click.testing import CliRunner

    from bot.cli import main

    monkeypatch.setenv("PERFBOT_INSTANCE_DIR", str(tmp_path / "instance"))
    repo, heads = build_project(tmp_path / "runtime")
    cli = CliRunner()
    result = cli.invoke(main, ["verify", "perf_boxed_sum", "--repo", str(repo.root), "--format", "json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output[result.output.index("{"):])
    assert data["verdict"] == "fixed" and data["plan"]["head"] == heads["fix/perf_boxed_sum"]
    assert [s["side"] for s in data["sides"]] == ["base", "head"] and data["sides"][1]["language_seconds"]
    slow = cli.invoke(main, ["verify", "perf_boxed_sum", "--repo", str(repo.root), "--head", "not-a-fix"])
    assert slow.exit_code == 0 and "\nreproduced: " in slow.output, slow.output  # the claim holds there: exit 0
    hostile = cli.invoke(main, ["verify", "perf_boxed_sum", "--repo", str(repo.root), "--head",
                                "--upload-pack=touch x"])
    assert hostile.exit_code == 1 and "not a valid ref" in hostile.output and not (repo.root / "x").exists()
    assert cli.invoke(main, ["verify", "perf_nope", "--repo", str(repo.root)]).exit_code == 1
    assert cli.invoke(main, ["sync", "--repo", str(repo.root)]).exit_code == 0
    shown = json.loads(cli.invoke(main, ["show", "perf_boxed_sum", "--format", "json"]).output)
    # newest first: not-a-fix, the fix
    assert [run["verdict"] for run in shown["bench_runs"]] == ["reproduced", "fixed"]
    assert [run["verdict_text"].split(";")[0] for run in shown["bench_runs"]] == ["reproduced", "fixed"]
    assert "pass" not in json.dumps(shown).replace("passes", "")  # the stored interval test never shows
    # `list` names each record's last finished run in the same words; `show` lists its bisections.
    listed = json.loads(cli.invoke(main, ["list", "--format", "json"]).output)
    assert [(r["slug"], r["last_run"]["verdict"]) for r in listed] == [("perf_boxed_sum", "reproduced")]
    # the text list says each record's standing, and the campaign's counts as every other view does
    text = cli.invoke(main, ["list"]).output
    assert re.search(r"perf_boxed_sum .* fixed ", text) and "1 fix(es) waiting for merge" in text, text
    assert listed[0]["outcome"] == "fixed" and listed[0]["standing"].startswith("fixed: ")
    from bot.adapters.store.engine import Database
    from bot.bisect import store as bisect_store

    database = Database(f"sqlite:///{tmp_path / 'instance' / 'perfbot.sqlite3'}")
    bisection = bisect_store.create(database, shown["repo"], "perf_boxed_sum", heads["main"], heads["not-a-fix"],
                                    requested_by="dev")
    bisect_store.finish(database, bisection, "found", "the claim came back", heads["not-a-fix"])
    database.dispose()
    text = cli.invoke(main, ["show", "perf_boxed_sum"]).output
    assert f"#{bisection}  {heads['main'][:12]}..{heads['not-a-fix'][:12]}  culprit {heads['not-a-fix'][:12]}" in text


def test_a_par_fix_reaches_the_target_speedup_and_main_does_not(tmp_path):
    from tests.bench_project import PAR_CONFIG, build_par_project, par_report

    repo, heads = build_par_project(tmp_path / "par")
    config = parse_repo_config(PAR_CONFIG)
    runner = LocalRunner("local", repo.root, tmp_path / "cache", build=config.build.argv)
    record = parse("devs/issues/perf_serial_work.md", par_report().encode()).record
    outcome = verify(record, config, runner, heads["fix/perf_serial_work"], base=heads["main"])
    base, head = outcome.sides
    assert outcome.verdict == "pass", outcome.message
    # Measured in the span the runtime prints: 240 units on one thread; on two, 240 on main and 120 on the fix.
    assert (base.decision, base.measure, base.interval.as_dict()) == (
        "fail", "metric:span", {"low": 1.0, "point": 1.0, "high": 1.0})
    assert (head.interval.low, head.interval.high) == (2.0, 2.0) and set(head.language) == {240.0}
    assert "one_thread_seconds" in head.as_dict() and "speedup on 2 threads" in outcome.message
