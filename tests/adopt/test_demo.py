"""`perfbot demo`: a real repository whose reports lint clean and whose fix really passes verification."""
from __future__ import annotations

import json
import re

import git
import pytest
from click.testing import CliRunner

from bot.adapters.git import GitRepository
from bot.cli import main
from bot.core.config import parse_repo_config
from bot.core.reports.parse import parse
from bot.demo import create_demo
from bot.errors import UserError
from bot.parity.flow import check_commit, check_range


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    root = tmp_path_factory.mktemp("demo")
    cli = CliRunner()
    # Verification caches worktrees and the store under the instance folder: keep both in this test's tmp.
    env = {"PERFBOT_INSTANCE_DIR": str(root / "instance"), "PERFBOT_DATABASE_URL": None}
    result = cli.invoke(main, ["demo", str(root / "demo")], env=env)
    assert result.exit_code == 0, result.output
    # The demo's own settings time in wall time; its verdicts are asserted on the runtime's step count, which
    # the C translations print too: the same on every run, so a busy test machine cannot turn them.
    settings = (root / "demo" / ".perfbot.toml").read_text()
    (root / "steps.toml").write_text(settings.replace("[verify]\n", '[verify]\nmeasure = {seq = "metric:steps"}\n', 1))
    return root / "demo", cli, env, result.output, f"sqlite:///{root / 'bench.sqlite3'}"


def verify(demo, *args: str, by_steps: bool = True) -> tuple[int, dict]:
    path, cli, env, _, db = demo
    steps = ["--config", str(path.parent / "steps.toml")] if by_steps else []
    result = cli.invoke(main, ["verify", *args, *steps, "--repo", str(path), "--format", "json", "--db", db], env=env)
    assert "{" in result.output, result.output
    return result.exit_code, json.loads(result.output[result.output.index("{"):])


def test_the_demo_is_a_git_repository_with_reports_that_lint_clean(demo):
    path, cli, env, output, _ = demo
    repo = git.Repo(path)
    assert repo.active_branch.name == "main" and not repo.is_dirty(untracked_files=True)
    assert {c.author.name for c in repo.iter_commits("--all")} == {"perfbot demo"}
    reports = sorted(p.name for p in (path / "devs/issues").iterdir())
    assert reports == ["perf_boxed_sum.md", "perf_mod_shift_subtract.md", "perf_mod_slower_than_v1.md",
                       "perf_xor_bit_by_bit.md"]
    linted = cli.invoke(main, ["lint", str(path / "devs/issues")], env=env)
    assert linted.exit_code == 0 and "4 file(s) checked: 0 error(s), 0 warning(s)" in linted.output, linted.output
    assert "perfbot verify perf_boxed_sum --repo" in output and "perfbot serve --repo" in output


def test_the_fix_branch_exists_and_is_the_one_the_report_names(demo):
    path = demo[0]
    record = parse("devs/issues/perf_boxed_sum.md", (path / "devs/issues/perf_boxed_sum.md").read_bytes()).record
    assert record.fix == "fix/perf_boxed_sum-unbox"
    repo = GitRepository(path)
    try:
        fix = repo.resolve(record.fix)
        assert repo.is_ancestor(repo.resolve("main"), fix) and repo.read_file(fix, "runtime.c") != \
            repo.read_file("main", "runtime.c")
    finally:
        repo.close()
    other = parse("x/perf_mod_shift_subtract.md", (path / "devs/issues/perf_mod_shift_subtract.md").read_bytes())
    assert other.record.fix == "unknown"


def test_the_settings_parse_and_name_a_local_runner_for_c(demo):
    config = parse_repo_config((demo[0] / ".perfbot.toml").read_text())
    assert config.build.argv and config.run.language == ("./runtime", "-T{threads}", "-s", "{file}", "{input}")
    assert config.run.program == "main.dl" and config.run.output == "normalize" and config.run.metrics
    assert config.runner_for("c").kind == "local"
    assert config.verify.max_samples <= 30 and config.verify.timeout_seconds <= 5


def test_the_same_commits_every_time(demo, tmp_path):
    again = create_demo(tmp_path / "again")
    repo = git.Repo(demo[0])
    assert again.heads == {"main": repo.commit("main").hexsha,
                           "fix/perf_boxed_sum-unbox": repo.commit("fix/perf_boxed_sum-unbox").hexsha,
                           "v1": repo.commit("v1").hexsha,
                           "gpu/cuda-early-exit": repo.commit("gpu/cuda-early-exit").hexsha}
    assert repo.is_ancestor(repo.commit("v1"), repo.commit("main"))  # v1 is the older implementation


def test_verify_passes_the_reports_own_fix_and_main_reproduces_the_claim(demo):
    code, data = verify(demo, "perf_boxed_sum")
    assert code == 0 and data["verdict"] == "fixed", data["message"]
    base, head = data["sides"]
    assert base["decision"] == "fail" and base["interval"]["low"] > 2.0 and head["interval"]["high"] <= 2.0
    assert data["plan"]["head"] == git.Repo(demo[0]).commit("fix/perf_boxed_sum-unbox").hexsha
    assert base["output"] == head["output"] == "4463072"
    gain = data["gain"]  # the program's own base/head times, beside each side's ratio to C
    assert gain["low"] <= gain["point"] <= gain["high"] and data["already_in_base"] is False
    assert re.search(r"; the program itself: [\d.]+x (faster|slower) \[[\d.]+, [\d.]+\], base to head",
                     data["message"]), data["message"]
    fix = data["plan"]["head"]
    code, merged = verify(demo, "perf_boxed_sum", "--base", fix, "--head", "main")  # main is behind the fix
    assert merged["already_in_base"] is True and merged["message"].startswith(
        f"already in base: the fix is an ancestor of {fix[:12]}; "), merged["message"]
    code, data = verify(demo, "perf_boxed_sum", "--head", "main")
    assert code == 0 and data["verdict"] == "reproduced" and [s["side"] for s in data["sides"]] == ["head"]


def test_the_report_fixed_in_main_is_measured_against_its_parent_and_every_view_says_fixed_in_main(demo):
    """The xor report names a commit merged into main: verify measures that commit against its parent (24 steps
    a value before it, one after, as C), and the record, the digest and the dashboard say 'fixed in main since'."""
    from bot.adapters.store.engine import Database
    from tests.lead.test_dashboard import make_client

    path, cli, env, output, db = demo
    repo = git.Repo(path)
    fix = create_demo(path.parent / "again-xor").merged_fix
    record = parse("devs/issues/perf_xor_bit_by_bit.md",
                   (path / "devs/issues/perf_xor_bit_by_bit.md").read_bytes()).record
    assert record.fix == fix[:12] and repo.is_ancestor(repo.commit(fix), repo.commit("main"))
    assert repo.commit(fix).message.startswith("runtime: xor with the C backend's `^`")
    assert f"a report fixed in main by {fix[:12]}" in output
    synced = cli.invoke(main, ["sync", "--repo", str(path), "--db", db], env=env)
    assert synced.exit_code == 0, synced.output
    code, data = verify(demo, "perf_xor_bit_by_bit")
    assert code == 0 and data["verdict"] == "fixed", data["message"]
    assert (data["plan"]["base"], data["plan"]["head"]) == (repo.commit(fix).parents[0].hexsha, fix)
    base, head = data["sides"]
    assert base["interval"]["point"] == 24.0 and head["interval"] == {"low": 1.0, "point": 1.0, "high": 1.0}
    assert base["output"] == head["output"] == "5964800" and not data["already_in_base"]
    digest = cli.invoke(main, ["digest", "--repo", str(path), "--dry-run", "--db", db], env=env)
    assert digest.exit_code == 0 and "1 fixed in main" in digest.output, digest.output
    assert f"fixed in main since {fix[:12]}" in digest.output
    database = Database(db)
    try:
        client = make_client(database, path.parent / "instance")
        overview = client.get("/dashboard/").get_data(as_text=True)
        records = client.get("/dashboard/records?state=all").get_data(as_text=True)
    finally:
        database.dispose()
    card = overview[overview.index('id="count-fixed-in-main"'):]
    assert re.match(r'id="count-fixed-in-main"><div class="n">1</div>', card), card[:80]
    assert f"fixed in main since {fix[:12]}" in records


def test_the_report_without_a_fix_is_measured_on_main_and_reproduces(demo):
    code, data = verify(demo, "perf_mod_shift_subtract")
    assert code == 0 and data["verdict"] == "reproduced", data["message"]
    claim = data["claim"]  # the report's own ratio against the measured one; named in the verdict only when off
    assert claim["measured"]["low"] <= claim["measured"]["point"] <= claim["measured"]["high"]
    assert claim["claimed"] > 2 and ("; claimed " in data["message"]) == claim["off"] == (
        data["verdict_text"] != "reproduced"), data["verdict_text"]
    assert data["plan"]["head"] == git.Repo(demo[0]).commit("main").hexsha and data["sides"][0]["output"] == "1222781"
    head = data["sides"][0]  # the runtime's -s statistics were dropped before comparing, and captured
    assert head["metrics"] == {"language": {"steps": 150000000}, "c": {"steps": 12000000}}  # 25 steps a value, C's 2
    assert "steps 150,000,000 vs 12,000,000" in data["message"] and head["interval"]["low"] == 12.5


def test_the_reference_report_measures_main_against_runtime_v1_at_both_sizes(demo):
    path = demo[0]
    code, data = verify(demo, "perf_mod_slower_than_v1")
    v1 = git.Repo(path).commit("v1").hexsha
    assert code == 0 and data["verdict"] == "slower_than_reference", data["message"]
    assert data["verdict_text"].startswith("slower than runtime@v1"), data["verdict_text"]
    assert [(s["side"], s["input"]) for s in data["sides"]] == [("head", "2000000"), ("head", "6000000")]
    for side in data["sides"]:
        assert side["against"] == f"runtime@v1 ({v1[:12]})" and side["decision"] == "fail"
        assert side["interval"]["low"] > 1.1 and len(side["language_seconds"]) == len(side["c_seconds"]) >= 5
        size = int(side["input"])  # both implementations really ran at that size: 25 steps a value on main, 2 on v1
        assert side["metrics"] == {"language": {"steps": 25 * size}, "c": {"steps": 2 * size}}
        assert all(run["user"] is not None and run["system"] is not None for run in side["language_runs"])
    assert data["sides"][1]["output"] == "1222781" and "within 1.1x of the reference" in data["message"]
    # runtime v1 was built from its own commit, beside main's build
    assert (path.parent / "instance" / "bench" / "local" / "worktrees" / v1 / "runtime").exists()


def test_the_gpu_twins_are_in_step_on_main_and_the_parity_branch_breaks_them(demo):
    path, cli, env, output, _ = demo
    assert "branch gpu/cuda-early-exit" in output and "gpu/kernels.h" in output
    clean = cli.invoke(main, ["parity", str(path / "gpu")], env=env)
    assert clean.exit_code == 0 and "1 file(s) checked: 1 twin pair(s), 0 problem(s)" in clean.output, clean.output
    repo = GitRepository(path)
    try:
        parity = parse_repo_config((path / ".perfbot.toml").read_text()).parity
        report = check_range(repo, repo.resolve("main"), repo.resolve("gpu/cuda-early-exit"), parity)
        assert check_commit(repo, repo.resolve("main"), parity).ok
    finally:
        repo.close()
    drifted, one_sided = report.findings
    assert drifted.rule == "drifted-twin" and "Metal block `sum_squares` (gpu/kernels.h:8-22)" in drifted.message
    assert "Metal has branch `?:` where CUDA has branch `if`" in drifted.message
    assert one_sided.rule == "one-sided-change" and [loc.line for loc in one_sided.locations] == [25, 8]


def test_a_non_empty_folder_is_refused_and_left_alone(tmp_path):
    (tmp_path / "mine.txt").write_text("keep me")
    result = CliRunner().invoke(main, ["demo", str(tmp_path)])
    assert result.exit_code == 1 and "already exists and is not an empty folder" in result.output
    assert [p.name for p in tmp_path.iterdir()] == ["mine.txt"]
    with pytest.raises(UserError):
        create_demo(tmp_path / "mine.txt")
    empty = tmp_path / "empty"
    empty.mkdir()
    assert create_demo(empty).heads["main"]


def test_a_report_measured_by_the_runtimes_step_count_is_decided_by_it(demo):
    """`measure: metric:steps` in the reference report itself, under the demo's own wall-time settings: main
    takes 25 steps a value where runtime v1 takes 2, exactly, so the report's 12.4x claim is confirmed."""
    path, _cli, _env, _, _db = demo
    repo = git.Repo(path)
    report = (path / "devs/issues/perf_mod_slower_than_v1.md").read_text()
    repo.git.checkout("-q", "-b", "by-steps")
    try:
        (path / "devs/issues/perf_mod_slower_than_v1.md").write_text(report.replace("---\n",
                                                                                    "---\nmeasure: metric:steps\n", 1))
        repo.git.commit("-qam", "count steps")
    finally:
        repo.git.checkout("-q", "main")
    code, data = verify(demo, "perf_mod_slower_than_v1", "--ref", "by-steps", by_steps=False)
    assert (code, data["verdict"]) == (0, "slower_than_reference"), data["message"]
    assert data["verdict_text"] == "slower than runtime@v1", data["verdict_text"]  # 12.4x claimed is not off
    assert all(s["measure"] == "metric:steps" and s["interval"] == {"low": 12.5, "point": 12.5, "high": 12.5}
               for s in data["sides"])
    assert "head/runtime@v1" in data["message"] and "(metric:steps) 12.5x [12.5, 12.5]" in data["message"]


def test_the_demos_own_settings_time_both_programs_in_wall_time(demo):
    """What `perfbot verify` does with the demo as made: wall time, sampled until decided or out of pairs. Its
    verdict depends on the machine's load, so this asserts what was measured, not what it concluded."""
    code, data = verify(demo, "perf_boxed_sum", "--head", "main", by_steps=False)
    [head] = data["sides"]
    assert code in (0, 1) and head["measure"] == "wall" and head["decision"] in ("pass", "fail", "inconclusive")
    assert len(head["language_seconds"]) == len(head["c_seconds"]) >= 5 and min(head["c_seconds"]) > 0
    assert head["interval"]["low"] <= head["interval"]["point"] <= head["interval"]["high"]
    assert head["metrics"] == {"language": {"steps": 30000001}, "c": {"steps": 5000000}}  # counted, not judged
