"""GPU claims, PAR claims at the thread count their sentence names, reference claims, and the format's examples."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from bot.core.lint.rules import lint_bytes
from bot.core.reports.agent_facts import missing_facts
from bot.core.reports.parse import parse
from bot.core.reports.records import ReadingOptions
from tests.reading.test_lint import edit
from tests.reports import canonical_report

FORMAT = Path(__file__).resolve().parents[2] / "devs" / "ISSUE_FORMAT.md"
EXAMPLES = re.findall(r"^````markdown\n(.*?)^````$", FORMAT.read_text(encoding="utf-8"), re.S | re.M)
PATH = "devs/issues/perf_example.md"


def rules(text: str, **options) -> set[str]:
    return {f.rule for f in lint_bytes(PATH, text.encode(), **options)}


def record(text: str):
    return parse(PATH, text.encode()).record


def test_issue_format_shows_a_gpu_report_and_a_reference_report():
    assert len(EXAMPLES) >= 3
    assert any("backend: metal" in e and "threads:" not in e for e in EXAMPLES)
    assert any("reference: runtime@" in e for e in EXAMPLES)


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda e: e.split("\n# ", 1)[1].split("\n", 1)[0][:40])
def test_every_example_in_issue_format_lints_clean(example):
    assert lint_bytes(PATH, example.encode()) == ()


GPU_TABLE = ("| run | time (ms) | threads |\n| --- | --- | --- |\n| bend (C backend) | 640 | 1 |\n"
             "| bend (C backend) | 96 | 8 |\n| bend (CUDA) | 160 | |\n")


def gpu_report(context: str, table: str = GPU_TABLE, ratio: str = "") -> str:
    text = edit(canonical_report(track="par", backend="cuda"), ("threads: 1\n", ""),
                ("ratio: 3.4\n", f"ratio: {ratio}\n" if ratio else ""))
    text = re.sub(r"\| implementation.*?\n\n", table + "\n", text, flags=re.S)
    return text.replace("Summing a complete binary tree", context + " Summing a complete binary tree")


def test_a_gpu_claim_is_target_over_achieved_and_needs_no_thread_count():
    text = gpu_report("CUDA reaches 4x over one CPU thread; ncu suggests about 30x is within reach.")
    found = record(text)
    assert (found.claim, found.threads, found.ratio) == ("gpu", None, 7.5)  # 30 / (640 / 160)
    assert "target 30x" in found.table_evidence and "4x achieved" in found.table_evidence
    assert "0.6x over the best CPU run 'bend (C backend)'" in found.table_evidence
    assert not rules(text) & {"threads-missing", "ratio-missing", "ratio-mismatch"}
    assert "threads" not in missing_facts(found)  # nor is an agent reviewer asked for one


def test_a_patched_gpu_row_sets_the_target_and_a_stated_ratio_is_checked_against_it():
    table = GPU_TABLE + "| bend (CUDA, patched) | 20 | |\n"
    assert record(gpu_report("CUDA is slow.", table)).ratio == 8.0  # 160 / 20
    assert "ratio-mismatch" not in rules(gpu_report("CUDA is slow.", table, ratio="8.2"))
    assert "ratio-mismatch" in rules(gpu_report("CUDA is slow.", table, ratio="2.5"))


def test_an_expected_speedup_over_the_best_cpu_count_also_agrees():
    text = gpu_report("ncu suggests about 6x over the best CPU run.", ratio="10")  # 6 / (96 / 160)
    assert "ratio-mismatch" not in rules(text)


def test_a_gpu_with_no_target_still_says_what_is_missing():
    text = gpu_report("CUDA is fast.", GPU_TABLE.replace("| 160 |", "| 60 |"))
    found = [f for f in lint_bytes(PATH, text.encode()) if f.rule == "ratio-missing"]
    assert found and "expected speedup" in found[0].message


PAR_TABLE = ("| threads | time (ms) |\n| --- | --- |\n| 1 | 2480 |\n| 4 | 700 |\n| 12 | 800 |\n| 16 | 610 |\n"
             "| 24 | 590 |\n")


def par_report(sentence: str, ratio: str) -> str:
    text = edit(canonical_report(track="par", backend="c", threads=8, ratio=4.0), ("threads: 8\n", ""),
                ("ratio: 4.0", f"ratio: {ratio}"))
    text = re.sub(r"\| implementation.*?\n\n", PAR_TABLE + "\n", text, flags=re.S)
    return text.replace("Summing a complete binary tree", sentence + " Summing a complete binary tree")


def test_the_thread_count_of_a_par_claim_comes_from_the_sentence_that_states_it():
    text = par_report("At T12 the speedup stalls at 3.1x of an ideal 12x.", "3.87")
    found = record(text)
    assert found.threads == 12 and "sentence stating the claim" in found.explain("threads")
    assert "ratio-mismatch" not in rules(text)
    # T24's ratio (5.71) is no evidence for a claim about T12.
    assert "ratio-mismatch" in rules(par_report("At T12 the speedup stalls at 3.1x.", "5.7"))


def test_a_thread_count_mentioned_in_passing_gives_the_row_but_any_row_may_match():
    found = record(par_report("Measured on a 16-core box.", "4.0"))
    assert found.threads == 16 and found.table_ratio == 3.94  # 16 / (2480 / 610), not T24's 5.71
    assert "ratio-mismatch" not in rules(par_report("Measured on a 16-core box.", "5.7"))


def test_a_ratio_no_row_gives_is_an_error_and_an_untimed_claim_only_a_warning():
    assert "ratio-mismatch" in rules(par_report("The speedup stalls.", "1.9"))
    untimed = rules(par_report("At T8 the speedup stalls at 4.2x.", "1.9"))
    assert "ratio-unsure" in untimed and "ratio-mismatch" not in untimed
    warning = next(f for f in lint_bytes(PATH, par_report("At T8 the speedup stalls at 4.2x.", "1.9").encode())
                   if f.rule == "ratio-unsure")
    assert "T4 (line" in warning.message and "T24 (line" in warning.message


REFERENCE = EXAMPLES[-1] if EXAMPLES else ""


def test_a_reference_claim_is_judged_by_the_reference_factor_not_the_2x_tolerance():
    found = record(REFERENCE)
    assert (found.claim, found.ratio) == ("reference", 1.6)
    assert rules(REFERENCE) == set()
    assert "reference-within-factor" in rules(REFERENCE, reading=ReadingOptions(reference_factor=2.0))
    without_ratio = edit(REFERENCE, ("ratio: 1.6\n", ""), ("track: seq\n", ""))
    assert record(without_ratio).ratio == 1.6 and rules(without_ratio) == set()  # 3.41 / 2.13, from the rows
    assert "ratio-mismatch" in rules(edit(REFERENCE, ("ratio: 1.6", "ratio: 3.4")))


def test_a_reference_report_without_reference_rows_says_so():
    text = edit(REFERENCE, ("ratio: 1.6\n", ""), ("runtime @v1", "runtime old"))
    found = next(f for f in lint_bytes(PATH, text.encode()) if f.rule == "ratio-missing")
    assert "names the reference `runtime@v1`" in found.message and "is C" not in found.message


def test_perfbot_lint_holds_reference_claims_to_the_repositorys_factor(tmp_path):
    from click.testing import CliRunner

    from bot.cli import main

    (tmp_path / ".git").mkdir()
    report = tmp_path / "devs" / "issues" / "perf_ref.md"
    report.parent.mkdir(parents=True)
    report.write_text(REFERENCE)
    lint = lambda *extra: CliRunner().invoke(main, ["lint", *extra, str(report)])  # noqa: E731
    assert lint().exit_code == 0  # no .perfbot.toml: the default factor, 1.0
    (tmp_path / ".perfbot.toml").write_text("[verify]\nreference_factor = 2.0\n")
    assert lint().exit_code == 1 and "reference-within-factor" in lint().output
    assert lint("--reference-factor", "1.0").exit_code == 0
    (tmp_path / ".perfbot.toml").write_text("[verify]\nreference_factor = -1\n")
    assert lint().exit_code == 2 and ".perfbot.toml:2: verify.reference_factor" in lint().output


def test_perfbot_lint_reads_the_program_under_the_repositorys_own_fence_tag(tmp_path):
    from click.testing import CliRunner

    from bot.cli import main

    (tmp_path / ".git").mkdir()
    report = tmp_path / "devs" / "issues" / "perf_example.md"
    report.parent.mkdir(parents=True)
    report.write_text(canonical_report("perf_example").replace("```bend", "```tally"))
    lint = lambda: CliRunner().invoke(main, ["lint", str(report)])  # noqa: E731
    undeclared = lint()
    assert undeclared.exit_code == 1 and "[repro-missing]" in undeclared.output, undeclared.output
    assert 'declare it in .perfbot.toml: [run] fence = ["tally"]' in undeclared.output
    (tmp_path / ".perfbot.toml").write_text('[run]\nfence = ["tally"]\n')
    assert lint().exit_code == 0, lint().output
    (tmp_path / ".perfbot.toml").write_text('[run]\n\nfence = ["C"]\n')
    assert lint().exit_code == 2 and ".perfbot.toml:3: run.fence: 'C' is not a fence tag" in lint().output
