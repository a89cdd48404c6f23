"""Every lint rule: one report that triggers it and one that keeps it quiet, plus messages, lines and order."""
from __future__ import annotations

import re
from dataclasses import dataclass, field

import pytest

from bot.core.lint.rules import RULES, RULES_BY_ID, lint, lint_bytes, with_history
from bot.core.reports.parse import parse
from bot.core.reports.records import ReadingOptions, Severity
from bot.core.tracker.refnames import branch_name_problem, suggest_branch_name
from tests.reports import canonical_report

PATH = "devs/issues/perf_example.md"
SPEC_RULES = {
    "empty": "error", "encoding": "error", "too-large": "error", "front-matter": "error", "front-matter-key": "warning",
    "front-matter-value": "error", "fence-unclosed": "error", "nesting": "error", "file-name": "error",
    "title-missing": "warning",
    "track-missing": "error", "backend-missing": "error", "threads-missing": "error", "ratio-missing": "error",
    "seq-within-tolerance": "error", "reference-within-factor": "error", "ratio-mismatch": "error",
    "ratio-unsure": "warning", "context-missing": "warning",
    "repro-missing": "error", "c-translation-missing": "error", "measurements-missing": "warning",
    "root-cause-missing": "error", "fix-missing": "error", "too-long": "error", "supersedes-unknown": "error",
    "supersedes-self": "error", "fix-ref-invalid": "error", "draft-location": "note", "ratio-meaning": "note",
    "reserved-name": "error", "reserved-in-tree": "warning",
}


def edit(text: str, *replacements: tuple[str, str]) -> str:
    """Apply exact replacements, each of which must apply (so a test can't silently test nothing)."""
    for old, new in replacements:
        assert old in text, old
        text = text.replace(old, new, 1)
    return text


def drop_table(text: str) -> str:
    return re.sub(r"^\|.*\|\n", "", text, flags=re.MULTILINE)


PAR = canonical_report(track="par", backend="c", threads=8, ratio=4.0)
NO_FACTS = "# Title\n\n## Context\n\nSomething is slow.\n\n## Root cause\n\nunknown\n\n## Fix\n\nunknown\n"
LONG_PROSE = " ".join(["word"] * 600)
METAL_BEHIND_ONE_CPU_THREAD = edit(
    drop_table(canonical_report(track="par", backend="metal")), ("track: par\nbackend: metal\nthreads: 1\nratio: 3.4\n",
                                                                 ""),
    ("## Measurements\n", "## Measurements\n\n| run | time (s) |\n| --- | --- |\n| bend CPU -T1 | 0.40 |\n"
                          "| bend Metal | 0.76 |\n| C (gcc -O2) | 0.30 |\n"),
    ("# Nested", "# Metal behind one thread: nested"),
)

# Compared with the runtime at v1 instead of C: head 0.8 s, v1 0.5 s, ratio 1.6.
REFERENCE = edit(canonical_report(ratio=1.6), ("fix: unknown", "reference: runtime@v1\nfix: unknown"),
                 ("| bend | 0.8000 s", "| runtime HEAD | 0.8000 s"), ("| C (gcc -O2) | 0.5000 s",
                                                                      "| runtime @v1 | 0.5000 s"))
# The claim is about T12; the table times T1 and T8 only.
PAR_UNTIMED_CLAIM = edit(PAR, ("threads: 8", "threads: 12"), ("ratio: 4.0", "ratio: 7.0"))


@dataclass(frozen=True)
class Case:
    text: str | bytes
    path: str = PATH
    options: dict = field(default_factory=dict)

    def findings(self):
        data = self.text.encode() if isinstance(self.text, str) else self.text
        return lint_bytes(self.path, data, **self.options)


TRIGGERS = {
    "empty": Case(b"  \n"),
    "encoding": Case(canonical_report().encode().replace(b"Summing", b"Summing \xff")),
    "too-large": Case(canonical_report(), options={"reading": ReadingOptions(max_bytes=1000)}),
    "front-matter": Case(edit(canonical_report(), ("ratio: 3.4", "ratio: [3.4"))),
    "front-matter-key": Case(edit(canonical_report(), ("fix: unknown", "fix: unknown\nowner: me"))),
    "front-matter-value": Case(edit(canonical_report(), ("track: seq", "track: sequential"))),
    "fence-unclosed": Case(canonical_report() + "\n```c\nint x;\n"),
    "nesting": Case(canonical_report(extra_prose=">" * 50_000 + " a quote 50,000 levels deep")),
    "file-name": Case(canonical_report(), path="devs/issues/Perf-Example.md"),
    "title-missing": Case(edit(canonical_report(), ("# Nested matches copy the scrutinee (perf_example)\n", ""))),
    "track-missing": Case(NO_FACTS),
    "backend-missing": Case(edit(PAR, ("backend: c\n", ""))),
    "threads-missing": Case(drop_table(edit(PAR, ("threads: 8\n", "")))),
    "ratio-missing": Case(drop_table(edit(canonical_report(), ("ratio: 3.4\n", "")))),
    "seq-within-tolerance": Case(canonical_report(ratio=1.8)),
    "ratio-mismatch": Case(edit(canonical_report(), ("ratio: 3.4", "ratio: 5.0"))),
    "reference-within-factor": Case(REFERENCE, options={"reading": ReadingOptions(reference_factor=2.0)}),
    "ratio-unsure": Case(PAR_UNTIMED_CLAIM),
    "context-missing": Case(edit(canonical_report(), ("## Context", "## Notes"))),
    "repro-missing": Case(edit(canonical_report(), ("```bend", "```python"))),
    "c-translation-missing": Case(edit(canonical_report(), ("```c\n", "```cpp\n"))),
    "measurements-missing": Case(drop_table(canonical_report())),
    "root-cause-missing": Case(edit(canonical_report(), ("## Root cause", "## Thoughts"))),
    "fix-missing": Case(edit(canonical_report(), ("## Fix", "## Misc"))),
    "too-long": Case(canonical_report(extra_prose=LONG_PROSE)),
    "supersedes-unknown": Case(canonical_report(supersedes=("perf_ghost",)),
                               options={"known_slugs": frozenset({"perf_example", "perf_ghosts"})}),
    "supersedes-self": Case(canonical_report(supersedes=("perf_example",))),
    "fix-ref-invalid": Case(canonical_report(fix="main")),
    "draft-location": Case(canonical_report(), path="drafts/perf_example.md"),
    "reserved-name": Case(canonical_report(), path=".perfbot-run/perf_example/devs/issues/perf_example.md"),
    "reserved-in-tree": Case(canonical_report(), options={"reading": ReadingOptions(reserved=(".perfbot-recipe",))}),
    "ratio-meaning": Case(METAL_BEHIND_ONE_CPU_THREAD),
}

QUIET = {
    "empty": Case("# Title\n"),
    "encoding": Case(canonical_report(extra_prose="Timings in µs, ratios in ×, naïve café.")),
    "too-large": Case(canonical_report(),
                      options={"reading": ReadingOptions(max_bytes=len(canonical_report().encode()))}),
    "front-matter": Case(edit(canonical_report(), ("supersedes: []\n---", "supersedes: []\n..."))),
    "front-matter-key": Case(canonical_report()),
    "front-matter-value": Case(edit(canonical_report(), ("track: seq", "track: SEQ"), ("ratio: 3.4", "ratio: '3.4'"))),
    "fence-unclosed": Case(canonical_report(extra_prose="````bend\n```\nnested fence text\n````")),
    "nesting": Case(canonical_report(extra_prose="> " * 100 + "a quote exactly 100 levels deep")),
    "file-name": Case(canonical_report(), path="/home/me/checkout/devs/issues/perf_example.md"),
    "title-missing": Case(edit(canonical_report(), ("# Nested matches copy the scrutinee (perf_example)",
                                                    "Nested matches copy\n==================="))),
    "track-missing": Case(edit(canonical_report(), ("track: seq\n", ""))),  # the table says bend vs C
    "backend-missing": Case(edit(PAR, ("backend: c\n", "")) + "\nMeasured on the CUDA backend.\n"),
    "threads-missing": Case(edit(PAR, ("threads: 8\n", ""))),  # the table's threads column
    "ratio-missing": Case(edit(canonical_report(), ("ratio: 3.4\n", ""))),  # computed from the table
    "seq-within-tolerance": Case(canonical_report(ratio=2.01)),
    "ratio-mismatch": Case(edit(canonical_report(), ("ratio: 3.4", "ratio: 3.7"))),  # within 10%
    "reference-within-factor": Case(REFERENCE),  # 1.6x slower than v1, beyond the default factor 1.0
    "ratio-unsure": Case(PAR),  # the claim's T8 is timed
    "context-missing": Case(edit(canonical_report(), ("## Context", "## Background:"))),
    "repro-missing": Case(edit(canonical_report(), ("```bend", "```hvm4"))),
    "c-translation-missing": Case(edit(canonical_report(), ("```c\n", "~~~{.c}\n"), ("```\n\n## Measurements",
                                                                                    "~~~\n\n## Measurements"))),
    "measurements-missing": Case(edit(canonical_report(), ("## Measurements", "## Results"))),
    "root-cause-missing": Case(edit(canonical_report(), ("## Root cause\n\nThe compiler",
                                                         "**Root cause:** unknown\n\nThe compiler"))),
    "fix-missing": Case(canonical_report(fix_text="unknown")),
    "too-long": Case(canonical_report(extra_prose=LONG_PROSE), options={"word_budget": 2000}),
    "supersedes-unknown": Case(canonical_report(supersedes=("perf_ghost",))),  # no history given: not checked
    "supersedes-self": Case(canonical_report(supersedes=("perf_other",))),
    "fix-ref-invalid": Case(canonical_report(fix="fix/deep-match")),
    "draft-location": Case(canonical_report(), path="/home/me/checkout/devs/issues/perf_example.md"),
    "reserved-name": Case(canonical_report(), path="devs/issues/perf_perfbot_run.md"),
    "reserved-in-tree": Case(canonical_report(), path=".perfbot-run/perf_example/devs/issues/perf_example.md"),
    "ratio-meaning": Case(PAR),
}


def test_rules_match_the_spec_ids_and_severities():
    assert {rule.id: rule.severity.value for rule in RULES} == SPEC_RULES
    assert all(rule.summary and len(rule.summary.splitlines()) == 1 for rule in RULES)
    assert RULES_BY_ID["file-name"].emitted_by == "linter" and RULES_BY_ID["empty"].emitted_by == "parser"


def test_every_rule_has_a_trigger_and_a_quiet_case():
    assert set(TRIGGERS) == set(QUIET) == set(SPEC_RULES)


@pytest.mark.parametrize("rule", sorted(TRIGGERS))
def test_rule_triggers(rule):
    findings = [f for f in TRIGGERS[rule].findings() if f.rule == rule]
    assert findings, f"{rule} did not fire"
    for finding in findings:
        assert finding.severity is Severity(SPEC_RULES[rule])
        assert finding.line >= 1 and finding.file == TRIGGERS[rule].path
        assert finding.message and finding.remedy


@pytest.mark.parametrize("rule", sorted(QUIET))
def test_rule_stays_quiet(rule):
    assert rule not in [f.rule for f in QUIET[rule].findings()]


def test_canonical_reports_lint_clean():
    assert lint_bytes(PATH, canonical_report().encode()) == ()
    for kwargs in ({"track": "par", "backend": "cuda", "threads": 32, "ratio": 6.0},
                   {"track": "par", "backend": "metal", "threads": 8, "ratio": 4.21, "fix": "abc1234"},
                   {"supersedes": ("perf_a", "perf_b"), "fix": "fix/perf_example-2"}):
        text = canonical_report(**kwargs)
        assert lint_bytes(PATH, text.encode(), known_slugs=frozenset({"perf_a", "perf_b"})) == (), kwargs


# --- messages quote the value, remedies say what to write, lines point at it ---------------------------------

def only(case: Case, rule: str):
    (finding,) = [f for f in case.findings() if f.rule == rule]
    return finding


def test_ratio_mismatch_names_both_ratios_and_the_fix():
    finding = only(TRIGGERS["ratio-mismatch"], "ratio-mismatch")
    assert finding.line == 5 and "5" in finding.message and "3.4" in finding.message and "47%" in finding.message
    assert "`ratio: 3.4`" in finding.remedy


def test_seq_within_tolerance_quotes_the_ratio():
    finding = only(TRIGGERS["seq-within-tolerance"], "seq-within-tolerance")
    assert finding.line == 5 and "1.8" in finding.message and "2x" in finding.message


def test_file_name_remedy_suggests_a_valid_name():
    assert "devs/issues/perf_example.md" in only(TRIGGERS["file-name"], "file-name").remedy


def test_a_draft_anywhere_lints_with_a_note_on_where_it_must_go():
    findings = Case(canonical_report(), path="docs/perf_example.md").findings()
    assert [(f.rule, f.severity) for f in findings] == [("draft-location", Severity.NOTE)]
    note = findings[0]
    assert "'docs/perf_example.md'" in note.message
    assert note.remedy.endswith("devs/issues/perf_example.md and commit it there")


def test_a_gpu_slower_than_one_cpu_thread_gets_a_ratio_that_says_what_it_means():
    record = parse(PATH, METAL_BEHIND_ONE_CPU_THREAD.encode()).record
    assert (record.track, record.backend, record.ratio) == ("par", "metal", 1.9)
    note = only(TRIGGERS["ratio-meaning"], "ratio-meaning")
    assert "slower than one CPU thread" in note.message and "ratio 1.9 derived from the table at line" in note.message


def test_supersedes_unknown_suggests_close_slugs():
    finding = only(TRIGGERS["supersedes-unknown"], "supersedes-unknown")
    assert finding.line == 7 and "'perf_ghost'" in finding.message and "`perf_ghosts`" in finding.remedy


def test_too_long_counts_words_and_says_how_many_to_cut():
    finding = only(TRIGGERS["too-long"], "too-long")
    words = parse(PATH, TRIGGERS["too-long"].text.encode()).record.prose_words
    assert f"{words} words" in finding.message and f"cut at least {words - 500} words" in finding.remedy


def test_missing_section_remedies_name_the_heading():
    assert "`## Root cause`" in only(TRIGGERS["root-cause-missing"], "root-cause-missing").remedy
    assert "`## Fix`" in only(TRIGGERS["fix-missing"], "fix-missing").remedy
    empty_fix = only(Case(canonical_report(fix_text="")), "fix-missing")
    assert "is empty" in empty_fix.message and empty_fix.line > 1


def test_repro_and_c_translation_messages_list_the_tags_seen():
    assert "python" in only(TRIGGERS["repro-missing"], "repro-missing").message
    assert "cpp" in only(TRIGGERS["c-translation-missing"], "c-translation-missing").message


def test_untagged_c_block_counts_as_the_c_translation():
    text = edit(canonical_report(), ("```c\n", "```\n"))
    assert "c-translation-missing" not in [f.rule for f in lint_bytes(PATH, text.encode())]


@pytest.mark.parametrize("fix, problem", [
    ("fix/deep match", "a space"), ("fix..x", "'..'"), ("-fix", "starts with '-'"), ("/fix", "'/'"),
    ("fix/x.lock", ".lock"), ("fix@{1}", "'@{'"), ("fix~1", "'~'"), ("fix^", "'^'"), ("'fix:x'", "':'"),
    ("'fix?'", "'?'"), ("'fix*'", "'*'"), ("'fix[1]'", "'['"), ("fix\\x", "'\\'"), ("fix/.hidden", "starts with '.'"),
    ("fix.", "ends with '.'"), ("fix//x", "'//'"), ("main", "main branch"), ("master", "master branch"),
    ("HEAD", "HEAD branch"), ("refs/heads/main", "main branch"), ("'@'", "'@'"),
])
def test_fix_ref_invalid_explains_the_problem(fix, problem):
    text = edit(canonical_report(), ("fix: unknown", f"fix: {fix}"))
    finding = only(Case(text), "fix-ref-invalid")
    assert finding.line == 6 and problem in finding.message
    suggestion = re.search(r"`fix: ([^`]+)`", finding.remedy).group(1)
    assert branch_name_problem(suggestion) is None


@pytest.mark.parametrize("fix", ["inline", "unknown", "Unknown", "abc1234", "0123456789abcdef0123456789abcdef01234567",
                                 "fix/deep-match", "perf_a-fix", "fix/perf_a/v2", "mainline"])
def test_fix_ref_accepts(fix):
    text = edit(canonical_report(), ("fix: unknown", f"fix: {fix}"))
    assert "fix-ref-invalid" not in [f.rule for f in Case(text).findings()]


def test_suggested_branch_names_are_valid():
    for name in ("deep match", "a..b", "-x", "x.lock", "@", "main", "~^:?*[\\"):
        assert branch_name_problem(suggest_branch_name(name)) is None, name


# --- lint plumbing --------------------------------------------------------------------------------------------

def test_lint_sorts_by_line_then_rule_and_includes_parse_findings():
    text = NO_FACTS + "\n```c\nint x;\n"
    findings = lint(parse(PATH, text.encode()))
    assert [(f.line, f.rule) for f in findings] == sorted((f.line, f.rule) for f in findings)
    assert "fence-unclosed" in [f.rule for f in findings]


def test_lint_uses_the_path_as_given_for_every_finding():
    result = parse("some/where.md", b"# T\n\n```c\n")
    findings = lint(result, path="elsewhere/perf_x.md")
    assert {f.file for f in findings} == {"elsewhere/perf_x.md"}
    assert {f.file for f in lint(result)} == {"some/where.md"}


def test_empty_file_gets_only_parse_and_path_findings():
    assert [f.rule for f in lint_bytes("notes.md", b"")] == ["empty", "file-name"]


def test_warnings_are_not_errors():
    findings = TRIGGERS["title-missing"].findings()
    assert [(f.rule, f.is_error) for f in findings] == [("title-missing", False)]


def test_lint_then_history_finds_what_lint_with_known_slugs_finds():
    # Sync lints without the store, then adds the one check that needs the slugs history has seen.
    reports = [canonical_report(f"perf_case_{i}", supersedes=named)
               for i, named in enumerate(((), ("perf_case_0",), ("perf_case_0", "perf_ghost"), ("perf_case_3",)))]
    reports.append("---\ntrack: seq\nsupersedes: [perf_case_0\n---\n# Broken\n")
    for i, text in enumerate(reports):
        path = f"devs/issues/perf_case_{i}.md"
        result = parse(path, text.encode())
        for known in (frozenset(), frozenset({"perf_ghost"}), frozenset({f"perf_case_{i}" for i in range(5)})):
            later = with_history(lint(result, path=path), result, path=path, known_slugs=known)
            assert later == lint(result, path=path, known_slugs=known)
