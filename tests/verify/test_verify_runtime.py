"""Verification fitted to a runtime whose CLI is not the demo's, on the local and the ssh runner alike: every
output rule, metrics, input sizes, both kinds of reference, and each measure, with real gcc-built programs."""
from __future__ import annotations

import os
import statistics
from pathlib import Path

import pytest

from bot.adapters.runners import LocalRunner
from bot.core.config import parse_repo_config
from bot.core.config.instance import OperatorConfig
from bot.core.reports.parse import parse
from bot.core.verify.run_parts import RunResult
from bot.errors import UserError
from bot.services.bench.measures import find_counter
from bot.services.bench.verify import MISMATCH, verify
from tests.runtime_project import N, build_runtime_project, config, expected, report

# The old runtime's clone lies beside the project; the operator allows its folder as a source (file://),
# which `_verify` fills in: a repository's file never names a path.
OLDRT = """[references.oldrt]
repository = "OLDRT_URL"
branch = "trunk"
build = ["gcc", "-O2", "-o", "bin/oldrt", "src/oldrt.c"]
run = ["./bin/oldrt", "--threads", "{threads}", "{file}", "{input}"]
program = "prog.hvm4"
factor = 1.5
"""


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    """The runtime project and the local runner; test_verify_runtime_ssh.py runs these tests on the ssh runner."""
    root = tmp_path_factory.mktemp("runtime-local")
    repo, heads, _other = build_runtime_project(root)
    yield heads, LocalRunner("local", repo.root, root / "cache", build=parse_repo_config(config()).build.argv,
                             memory_mb=512)


def _verify(project, text: str, settings: str, head: str, base: str | None = None,
            reference_sources: tuple[str, ...] | None = None):
    heads, runner = project
    record = parse("devs/issues/perf_fold.md", text.encode()).record
    beside = Path(runner.repo_path).parent
    settings = settings.replace("OLDRT_URL", f"file://{beside / 'oldrt'}")
    allowed = (f"file://{beside}/",) if reference_sources is None else reference_sources
    conf = OperatorConfig(reference_sources=allowed).narrow(parse_repo_config(settings))
    return verify(record, conf, runner, heads[head], heads[base] if base else None)


def test_normalized_outputs_pass_the_fix_and_capture_the_runtimes_counts(project):
    outcome = _verify(project, report(), config(), "fix", base="main")
    base, head = outcome.sides
    assert outcome.verdict == "pass", outcome.message
    assert base.decision == "fail" and base.interval.low > 2.0 and head.interval.high <= 2.0
    assert head.output == expected()  # ITRS/TIME/MIPS lines dropped, `1n` read as `1`
    assert head.metric_medians("language")["itrs"] == 3 * N and head.metric_medians("c") == {"itrs": 3 * N}
    assert base.metric_medians("language")["itrs"] == 83 * N and base.interval.point == 83 / 3  # decided on counts
    assert (len(head.runs["language"]) == len(head.language)
            and all(r["metrics"]["mips"] > 0 for r in head.runs["language"]))
    assert f"itrs {3 * N:,} vs {3 * N:,}" in outcome.message and "(metric:itrs)" in outcome.message
    # CPU time comes with every wall time, from wait4 rusage on either runner
    assert all(r["user"] is not None and r["system"] is not None and r["faults"] > 0 for r in head.runs["c"])


def test_a_rule_that_leaves_a_difference_shows_both_outputs_as_compared_and_the_rule(project):
    partial = config(run_extra='output = "normalize"\nnormalize = [["(?m)^- [A-Z]+:.*$", ""]]')
    outcome = _verify(project, report(), partial, "fix")
    assert outcome.verdict == MISMATCH and outcome.sides[-1].language == []
    assert repr(expected(suffix="n")) in outcome.message and repr(expected()) in outcome.message
    assert 'after output = "normalize" (s/(?m)^- [A-Z]+:.*$//)' in outcome.message


def test_exact_outputs_must_be_equal(project):
    # Nothing but the result may be printed, so no count either: instructions decide, at a size cachegrind runs fast.
    plain = config(language='["./hvm", "run", "{file}", "-T{threads}", "-C1", "{input}"]', run_extra="",
                   verify_extra='measure = "instructions"')
    outcome = _verify(project, report(c_suffix="n", inputs="[20000]"), plain, "fix")
    assert outcome.verdict == "pass" and outcome.sides[-1].output == expected(20000, suffix="n"), outcome.message
    outcome = _verify(project, report(), plain, "fix")
    assert outcome.verdict == MISMATCH and 'after output = "exact"' in outcome.message


def test_last_line_compares_only_the_result(project):
    chatty = config(language='["./hvm", "run", "-v", "{file}", "-T{threads}", "{input}"]',
                    run_extra='output = "last-line"', verify_extra='measure = "instructions"')
    outcome = _verify(project, report(c_suffix="n", inputs="[20000]"), chatty, "main")
    assert outcome.verdict == "fail" and outcome.sides[-1].output == expected(20000, suffix="n"), outcome.message


def test_each_input_size_is_verified_and_the_c_side_gets_the_same_arguments(project):
    outcome = _verify(project, report(inputs="[200000, 1000001]"), config(), "fix")
    assert outcome.verdict == "pass", outcome.message
    assert [(s.input, s.output) for s in outcome.sides] == [("200000", expected(200000)), ("1000001",
                                                                                           expected(1000001))]
    assert [s.metric_medians("language")["itrs"] for s in outcome.sides] == [600000, 3000003]
    assert "input 200000" in outcome.message and "input 1000001" in outcome.message


def test_a_reference_on_a_branch_of_the_project(project):
    outcome = _verify(project, report(reference="runtime@old"), config(), "main")
    head = outcome.sides[-1]
    assert outcome.verdict == "fail" and head.interval.low > 1.0, outcome.message
    assert head.against.startswith("runtime@old (") and "within 1x of the reference" in outcome.message
    assert head.metric_medians("c")["itrs"] == 3 * N and head.metric_medians("language")["itrs"] == 83 * N
    # The fix runs the previous runtime's instruction for instruction: a count decides that at once.
    counted = config(verify_extra='measure = "instructions"\nreference_factor = 1.05')
    outcome = _verify(project, report(reference="runtime@old", inputs="[20000]"), counted, "fix")
    head = outcome.sides[-1]
    assert outcome.verdict == "pass" and 0.99 < head.interval.point < 1.01, outcome.message
    assert len(head.language) == 5 and head.language[0] > 20000 * 3 and "(instructions)" in outcome.message


def test_a_reference_with_its_own_repository_build_and_run_list(project):
    outcome = _verify(project, report(reference="oldrt", inputs="[2000000]"), config(tail=OLDRT), "main")
    head = outcome.sides[-1]
    assert outcome.verdict == "fail" and head.interval.low > 1.5, outcome.message
    assert head.against.startswith("oldrt@trunk (") and head.output == expected(2000000)
    assert head.metric_medians("c")["itrs"] == 3 * 2000000  # its own run list really got the input
    # User time is counted in scheduler ticks on many kernels: give it a size that runs for tens of ms. It is
    # still a time, which a shared machine can move: what is asserted is that the ratio is made of it.
    settings = config(tail=OLDRT, verify_extra='measure = "user"', max_samples=8)  # what it is made of, not a verdict
    outcome = _verify(project, report(reference="oldrt", inputs="[40000000]"), settings, "fix")
    head = outcome.sides[-1]
    assert outcome.verdict in ("pass", "fail", "inconclusive") and head.measure == "user", outcome.message
    assert head.language == [r["user"] for r in head.runs["language"]] and "(user time)" in outcome.message
    assert head.c == [r["user"] for r in head.runs["c"]] and head.interval.low <= head.interval.high
    counted = config(tail=OLDRT, verify_extra='measure = "instructions"')
    outcome = _verify(project, report(reference="oldrt", inputs="[20000]"), counted, "fix")
    assert outcome.verdict == "pass" and outcome.sides[-1].interval.high <= 1.1, outcome.message
    with pytest.raises(UserError, match=r"no \[references.newrt\] \(known: oldrt\)"):
        _verify(project, report(reference="newrt"), settings, "fix")


def test_a_reference_repository_given_by_url_is_mirrored_and_fetched(project, tmp_path):
    _heads, runner = project
    settings = config(tail=OLDRT, verify_extra='measure = "instructions"')
    outcome = _verify(project, report(reference="oldrt", inputs="[20000]"), settings, "fix")
    assert outcome.verdict == "pass" and outcome.sides[-1].against.startswith("oldrt@trunk ("), outcome.message
    mirrors = list((Path(runner.repo_path) / ".git" / "perfbot-references").iterdir())
    assert len(mirrors) == 1 and (mirrors[0] / "HEAD").is_file()
    outcome = _verify(project, report(reference="oldrt", inputs="[20000]"), settings, "fix")  # fetched, reused
    assert outcome.verdict == "pass" and len(list(mirrors[0].parent.iterdir())) == 1
    # A source the operator did not allow is never fetched: no new mirror, and the run stops before measuring.
    for allowed in ((), ("https://github.com/org/",)):
        with pytest.raises(UserError, match=r"\[references.oldrt\] repository .* is not a source the operator"):
            _verify(project, report(reference="oldrt", inputs="[20000]"), settings, "fix", reference_sources=allowed)
    assert len(list(mirrors[0].parent.iterdir())) == 1


def test_page_faults_stay_out_of_a_user_time_verdict(project):
    heads, runner = project
    # The C side touches 128 MB one byte a page before the same fold: that cost is the kernel's, and varies
    # with what else the host does. User time leaves it out: the samples are the user time alone, while the
    # faults' time shows up as system time beside them.
    text = report(inputs="[40000000]")
    hog = text.replace("unsigned acc = 0;\n  for", "char *p = malloc(128u << 20); for (unsigned long b = 0; b < "
                       "(128u << 20); b += 4096) p[b] = 1;\n  unsigned acc = p[4096] - 1;\n  for", 1)
    assert hog != text
    record = parse("devs/issues/perf_fold.md", hog.encode()).record
    settings = parse_repo_config(config(verify_extra='measure = "user"'))
    outcome = verify(record, settings, runner, heads["fix"])
    runs = outcome.sides[-1].runs["c"]
    assert runs and min(r["faults"] for r in runs) > 128 * 256 // 2, outcome.message  # they really happened
    assert min(r["system"] for r in runs) > 0, runs[0]
    assert outcome.sides[-1].c == [r["user"] for r in runs]  # and the samples leave their system time out
    # Under wall time the faults are in the samples: the verdict says where that time went.
    walled = verify(record, parse_repo_config(config(verify_extra='measure = "wall"')), runner, heads["fix"])
    share = statistics.median(r["system"] / r["wall"] for r in walled.sides[-1].runs["c"])
    assert ("the C translation spends over 30% of its wall time in the kernel" in walled.message) == (share > 0.3)
    assert share < 0.3 or 'measure = "user"' in walled.message, walled.message


def test_instructions_without_a_counter_say_what_each_tool_answered(project, tmp_path, monkeypatch):
    _heads, runner = project
    if not isinstance(runner, LocalRunner):
        pytest.skip("the ssh host's PATH is the host's own")
    monkeypatch.setenv("PATH", str(tmp_path))  # neither perf nor valgrind can be found
    bare = LocalRunner("bare", runner.repo_path, tmp_path / "cache", build=None, sandbox="none")
    with pytest.raises(UserError) as caught:
        find_counter(bare, tmp_path)
    message = str(caught.value)
    assert "perf stat: cannot run perf" in message and "valgrind --tool=cachegrind: cannot run valgrind" in message
    assert 'use measure = "user"' in message and bare.host in message
    assert os.environ["PATH"] == str(tmp_path)


def test_the_pr_comment_shows_the_runtimes_counts_beside_the_times(project):
    from bot.adapters.templates import render
    from bot.core.verify import bench_view
    from bot.core.verify.units import result_unit

    outcome = _verify(project, report(), config(), "fix", base="main")
    result = RunResult(tuple(side.stored() for side in outcome.sides))
    rows = bench_view.side_rows(result)
    mips = bench_view.count_text(outcome.sides[-1].metric_medians("language")["mips"])
    assert rows[-1].metrics == f"`itrs {3 * N:,} vs {3 * N:,}; mips {mips} vs -`"
    comment = render("bench_comment.md.j2", marker="<!-- perfbot:bench 1 -->", run={"status": "done", "id": 1,
                                                                                    "runner": "local", "host": "",
                                                                                    "requested_by": ""},
                     slug="perf_fold", icon="", headline="fixed", progress="", rows=rows, gain="", suite_said="",
                     columns=bench_view.column_names(result, None), unit=result_unit(result), chart="",
                     fenced_message="", suite=None,
                     criterion="", scaling=[], result=result, waiting="")
    header, separator, *lines = [line for line in comment.splitlines() if line.startswith("|")]
    assert header.endswith("| metrics (median, language vs C) |") and separator.count("|") == header.count("|")
    assert all(line.count("|") == header.count("|") and f"vs {3 * N:,}; mips" in line for line in lines)
