"""`.perfbot.toml` keys that fit verification to a runtime, the report's `reference:`/`inputs:`, and the pure plan."""
from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest

from bot.core.config import ConfigFileError, parse_repo_config
from bot.core.reports.codeblocks import classify_content
from bot.core.reports.parse import parse
from bot.core.reports.records import ReadingOptions
from bot.core.verify.bench_run import BenchRun, RunOptions, RunResult
from bot.core.verify.outputs import metrics_of, mismatch, normalised
from bot.core.verify.verify_plan import program_name, programs, reference_of, with_input
from bot.core.verify.vocabulary import Purpose, RunStatus
from bot.errors import UserError
from tests.runtime_project import config, report

VERIFICATION_PAGE = Path(__file__).resolve().parents[2] / "docs" / "verification.md"


def _documented_example() -> str:
    text = VERIFICATION_PAGE.read_text()
    start = text.index("**Fitting a real runtime**")
    block = text[text.index("    [build]", start):text.index("\n\n", text.index("    [build]", start))]
    return "\n".join(line[4:] for line in block.splitlines())


def test_the_documented_example_parses_and_its_rule_makes_an_hvm_output_equal_to_c():
    conf = parse_repo_config(_documented_example())
    run = conf.run
    assert run.program == "main.hvm4" and conf.measure == "instructions" and conf.verify.reference_factor == 1.1
    assert conf.run.language == ("./clang/hvm", "run", "{file}", "-T{threads}", "-C1", "-s", "{input}")
    bend2 = conf.reference("bend2")
    assert (bend2.repository, bend2.branch, bend2.program, bend2.factor) == ("https://github.com/org/bend2", "main",
                                                                           "main.bend", 1.2)
    hvm = "#Tup{1n,1n}\n- ITRS: 1,234\n- TIME: 0.01s\n- MIPS: 12.5\n"
    assert normalised(hvm, run) == "#Tup{1,1}" and mismatch(hvm, "#Tup{1,1}\n", run, ("a", "b"), "at x") is None
    assert metrics_of(hvm, "", run) == {"itrs": 1234.0, "mips": 12.5}


def test_output_rules_and_their_mismatch_message():
    last = parse_repo_config('[run]\noutput = "last-line"\n').run
    assert normalised("loading\n42\n\n", last) == "42"
    exact = parse_repo_config("").run
    message = mismatch("1\n", "2", exact, ("the program", "the C translation"), "at abc")
    assert message == "at abc the program prints '1' but the C translation prints '2' (after output = \"exact\"): " \
                      "not the same computation"


@pytest.mark.parametrize("text, key", [
    ('[run]\noutput = "fuzzy"\n', "run.output"),
    ('[run]\noutput = "normalize"\n', "run.normalize"),
    ('[run]\nnormalize = [["a", "b"]]\n', "run.normalize"),
    ('[run]\noutput = "normalize"\nnormalize = [["(", ""]]\n', "run.normalize"),
    ('[run]\noutput = "normalize"\nnormalize = [["a", "\\\\2"]]\n', "run.normalize"),
    ('[run]\noutput = "normalize"\nnormalize = ["a"]\n', "run.normalize"),
    ('[run]\nmetrics = {itrs = "(a)(b)"}\n', "run.metrics.itrs"),
    ('[run]\nmetrics = {"1x" = "a"}\n', "run.metrics.1x"),
    ('[run]\nprogram = "../main.hvm4"\n', "run.program"),
    ('[run]\nprogram = ".hidden"\n', "run.program"),
    ('[verify]\nmeasure = "cycles"\n', "verify.measure"),
    ('[verify]\nreference_factor = 0\n', "verify.reference_factor"),
    ('[references.old]\nbranch = "v1"\n', "references.old.run"),
    ('[references.old]\nrun = ["x"]\nbranch = "--upload-pack=x"\n', "references.old.branch"),
    ('[references.old]\nrun = ["x"]\nrepo = "x"\n', "references.old.repo"),
    ('[references.runtime]\nrun = ["x"]\n', "references.runtime"),
    ('[run]\nlanguage = ["./x", "{size}"]\n', "run.language"),
    ('[verify]\nthreads = []\n', "verify.threads"),
    ('[verify]\nthreads = [1, 0]\n', "verify.threads"),
    ('[verify]\nthreads = [2, 4, 2]\n', "verify.threads"),
    ('[verify]\nthreads = [1.5]\n', "verify.threads"),
    ('[verify]\nthreads = [true]\n', "verify.threads"),
    ('[verify]\nthreads = "4"\n', "verify.threads"),
    ('[verify]\nthreads = [2048]\n', "verify.threads"),
    ('[verify]\nflatten_gain = 1.5\n', "verify.flatten_gain"),
])
def test_bad_settings_name_their_key(text, key):
    with pytest.raises(ConfigFileError) as caught:
        parse_repo_config(text)
    assert caught.value.key == key, str(caught.value)
    assert re.match(r"\.perfbot\.toml:\d+: ", str(caught.value))


def test_a_report_says_what_it_compares_with_and_at_which_sizes():
    record = parse("devs/issues/perf_fold.md", report(reference="runtime@old", inputs="[100, 2000]").encode()).record
    assert record.reference == "runtime@old" and record.inputs == ("100", "2000")
    conf = parse_repo_config(config())
    ref = reference_of(record, conf)
    assert (ref.name, ref.branch, ref.run, ref.build) == ("runtime", "old", conf.run.language, conf.build.argv)
    assert programs(record, conf)[1] == ""  # no C translation needed
    bad = parse("devs/issues/perf_fold.md", report(reference="x; rm -rf /", inputs="{a: 1}").encode())
    assert bad.record.reference is None and bad.record.inputs == ()
    assert {f.rule for f in bad.findings} >= {"front-matter-value"}
    with pytest.raises(UserError, match="needs the ref"):
        reference_of(parse("d/perf_fold.md", report(reference="runtime").encode()).record, conf)


def test_a_named_reference_at_a_ref_is_its_table_on_that_ref():
    conf = parse_repo_config(config(tail='[references.old]\nrun = ["./bin/old", "{file}"]\nbranch = "v1"\n'))
    at_ref = reference_of(parse("d/perf_fold.md", report(reference="old@v0.9").encode()).record, conf)
    assert (at_ref.name, at_ref.branch, at_ref.run) == ("old", "v0.9", ("./bin/old", "{file}"))
    as_declared = reference_of(parse("d/perf_fold.md", report(reference="old").encode()).record, conf)
    assert (as_declared.name, as_declared.branch) == ("old", "v1")


def test_inputs_become_arguments_and_the_program_file_gets_its_name():
    assert with_input(("./hvm", "run", "{file}", "{input}"), "10 20") == ("./hvm", "run", "{file}", "10", "20")
    assert with_input(("./hvm", "{file}", "{input}"), None) == ("./hvm", "{file}")
    assert with_input(("{out}",), "7") == ("{out}", "7")
    assert with_input(("./x", "--size={input}"), "7") == ("./x", "--size=7")
    conf = parse_repo_config("")
    hvm = parse("devs/issues/perf_fold.md", report(fence="hvm4").encode()).record
    assert program_name(hvm, conf) == "program.hvm4"
    assert program_name(hvm, parse_repo_config('[run]\nprogram = "main.hvm4"\n')) == "main.hvm4"
    assert program_name(parse("d/perf_fold.md", report(fence="bend").encode()).record, conf) == "program.bend"


def test_the_actions_runner_refuses_what_its_script_cannot_do():
    from bot.adapters.runners.actions import dispatch_inputs
    from bot.core.config.instance import parse_instance_config

    operator = parse_instance_config('[[runners]]\nname = "gh"\nkind = "actions"\nlabels = ["c"]\n')[1]
    conf = operator.narrow(parse_repo_config(config()))
    record = parse("devs/issues/perf_fold.md", report().encode()).record
    with pytest.raises(UserError,
                       match=r'does not support \[run\] program, \[run\] output = "normalize", \[run\] metrics'):
        dispatch_inputs(BenchRun(id=1, repo="o/r", slug="perf_fold", purpose=Purpose.FIX, status=RunStatus.QUEUED,
                                 base="a" * 40, head="b" * 40), record, conf, conf.operator.runners[0])


def test_bench_tables_name_the_reference_and_the_measure():
    from bot.core.verify.bench_view import column_names

    parsed = RunResult.from_json  # each as a row stores it
    reference = {"sides": [{"side": "head", "against": "runtime@v1 (4cb1783c9ba1)", "measure": "instructions",
                            "language_seconds": [2.0], "c_seconds": [1.0]}]}
    # Both sides run the language: the one measured is "this revision", never "language" against itself.
    assert column_names(parsed(reference), 1) == ("this revision (median instructions)",
                                                  "runtime@v1 (median instructions)",
                                                  "this revision/runtime@v1 [95% interval]")
    old = {"sides": [{"side": "head", "language_seconds": [2.0], "c_seconds": [1.0]}]}  # stored before both keys
    assert column_names(parsed(old), 1) == ("language (median s)", "C (median s)", "language/C [95% interval]")
    for measure, unit in (("wall", "s"), ("user", "user s"), ("metric:steps", "steps")):
        seq = {"sides": [{"side": "head", "measure": measure, "language_seconds": [2.0], "c_seconds": [1.0]}]}
        assert column_names(parsed(seq), 1)[:2] == (f"language (median {unit})", f"C (median {unit})"), measure
        par = {"sides": [{"side": "head", "measure": measure, "one_thread_seconds": [2.0], "n_threads_seconds": [1.0]}]}
        assert column_names(parsed(par), 8) == (f"1 thread (median {unit})", f"8 threads (median {unit})",
                                        "speedup [95% interval]"), measure


def test_a_par_report_is_measured_in_wall_time_or_a_span_never_in_what_adds_up_over_threads():
    from tests.bench_project import par_report

    record = parse("devs/issues/perf_serial_work.md", par_report().encode()).record
    base = '[run]\nlanguage = ["./runtime", "{file}"]\nmetrics = {span = "SPAN: ([0-9]+)"}\n[verify]\n'
    for measure in ("wall", "metric:span"):
        assert programs(record, parse_repo_config(f'{base}measure = "{measure}"\n'))[0] == "work 240\n"
    with pytest.raises(UserError, match=r'perf_serial_work: measure "user" adds up over threads.*'
                                        r'measure = \{seq = "user", par = "wall"\} in .perfbot.toml'):
        programs(record, parse_repo_config(base + 'measure = "user"\n'))
    stated = dataclasses.replace(record, measure="instructions")
    with pytest.raises(UserError, match=r'"instructions" adds up over threads.*change the report\'s `measure:`'):
        programs(stated, parse_repo_config(base + 'measure = "instructions"\n'))
    with pytest.raises(ConfigFileError, match=r'\.perfbot\.toml:5: verify\.measure: "user" adds up over threads'):
        parse_repo_config(base + 'measure = {seq = "instructions", par = "user"}\n')


def test_a_sweep_takes_any_thread_counts_in_order():
    settings = parse_repo_config('[verify]\nthreads = [12, 1, 6, 3]\nflatten_gain = 0.3\npar_efficiency = 0.8\n')
    assert settings.verify.threads == (1, 3, 6, 12) and settings.verify.flatten_gain == 0.3
    assert settings.verify.par_efficiency == 0.8
    assert parse_repo_config("").verify.threads is None  # the host's cores decide


def test_a_measure_per_track_or_per_report_and_a_metric_as_the_measure():
    from dataclasses import replace

    from bot.core.verify.verify_plan import with_measure

    base = '[run]\nmetrics = {itrs = "ITRS: ([0-9]+)"}\n[verify]\n'
    settings = parse_repo_config(base + 'measure = {seq = "instructions", par = "wall"}\n')
    assert (settings.measure_for("seq"), settings.measure_for("par"), settings.measure_for("seq", "metric:itrs")) == (
        "instructions", "wall", "metric:itrs")
    assert parse_repo_config(base + 'measure = "metric:itrs"\n').measure == "metric:itrs"
    for text, problem in (('measure = "metric:steps"', "'steps' is not one of the [run] metrics (itrs)"),
                          ('measure = {gpu = "wall"}', "per-track measures name seq and par only"),
                          ('measure = {seq = "cycles"}', "must be one of wall, user, instructions or metric:NAME")):
        with pytest.raises(ConfigFileError, match=re.escape(problem)):
            parse_repo_config(base + text + "\n")
    config = parse_repo_config(base + 'measure = {seq = "instructions"}\n')
    record = parse("devs/issues/perf_x.md", report().encode()).record
    assert with_measure(config, record).measure == "instructions"
    stated = replace(record, measure="metric:itrs")
    assert with_measure(config, stated).measure == "metric:itrs"
    with pytest.raises(UserError, match=re.escape("`measure: metric:steps`: 'steps' is not one of the [run] metrics")):
        with_measure(config, replace(record, measure="metric:steps"))


@pytest.mark.parametrize("text, line, problem", [
    ('[run]\nlanguage = ["./x", "{file}"]\nfence = ["Tally"]\n', 3, "'Tally' is not a fence tag: one lower-case word"),
    ('[run]\nfence = ["tally", "c"]\n', 2, "`c` already fences the C, CUDA or Metal side"),
    ('[verify]\nfixes = true\n\n\n\n[run]\n# the runtime\'s own\nfence = [\n  "cu",\n]\n',
     8, "`cu` already fences"),
    ('[run]\nfence = "tally"\n', 2, 'must be a list of fence tags, e.g. ["tally"]'),
    ('[run]\nfence = ["tally", "tally"]\n', 2, "names a tag twice"),
    ('[run]\nfence = ["tally program"]\n', 2, "is not a fence tag"),
])
def test_a_fence_tag_is_one_lower_case_word_apart_from_the_c_side_and_its_error_names_the_line(text, line, problem):
    with pytest.raises(ConfigFileError) as caught:
        parse_repo_config(text)
    assert (caught.value.key, caught.value.line) == ("run.fence", line), str(caught.value)
    assert problem in caught.value.problem


def test_a_declared_fence_tag_marks_the_program_and_untagged_blocks_are_still_classified():
    tally = report(fence="tally")
    plain = parse("devs/issues/perf_fold.md", tally.encode()).record
    assert not plain.blocks("language") and [b.tag for b in plain.blocks("other")] == ["tally"]
    conf = parse_repo_config('[run]\nlanguage = ["./tally", "{file}"]\nfence = ["tally"]\n')
    assert conf.reading == ReadingOptions(reference_factor=1.0, language_tags=("tally",))
    read = parse("devs/issues/perf_fold.md", tally.encode(), conf.reading).record
    assert [b.tag for b in read.blocks("language")] == ["tally"] and program_name(read, conf) == "program.tally"
    assert programs(read, conf)[0] == plain.blocks("other")[0].code
    with pytest.raises(UserError, match="the program is missing"):
        programs(plain, conf)
    # The built-in tags still count beside the declared one; an untagged block is judged by its content.
    assert parse("d/perf_fold.md", report(fence="hvm4").encode(), conf.reading).record.blocks("language")
    untagged = tally.replace("```tally", "```").replace("```c\n", "```\n", 1)
    blocks = parse("d/perf_fold.md", untagged.encode(), conf.reading).record.code_blocks
    assert [(b.tag, b.lang) for b in blocks] == [("", classify_content(blocks[0].code)), ("", "c")]


def test_bench_inputs_read_the_program_under_the_configured_tag(tmp_path):
    from bot.adapters.git import GitRepository
    from bot.services.bench import bench_inputs
    from tests.gitrepo import RepoBuilder

    repo = RepoBuilder(tmp_path / "tally", branch="main")
    head = repo.write("devs/issues/perf_fold.md", report(fence="tally")).commit("a report fenced ```tally")
    git_repo = GitRepository(repo.root)
    try:
        config, record = bench_inputs.for_run(git_repo, queued("perf_fold", head, {}))
        with pytest.raises(UserError, match="the program is missing"):
            programs(record, config)
        repo.write(".perfbot.toml", '[run]\nlanguage = ["./tally", "{file}"]\nfence = ["tally"]\n').commit("declare it")
        config, record = bench_inputs.for_run(git_repo, queued("perf_fold", head, {}))
        program = record.blocks("language")
        assert [b.tag for b in program] == ["tally"] and programs(record, config)[0] == program[0].code
    finally:
        git_repo.close()


def queued(slug: str, head: str, options: dict) -> BenchRun:
    """A queued claim run as the store hands it to bench_inputs.for_run."""
    return BenchRun(id=1, repo="o/r", slug=slug, purpose=Purpose.REPRODUCE, status=RunStatus.QUEUED, head=head,
                    options=RunOptions.from_json(options))
