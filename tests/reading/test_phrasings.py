"""Every phrasing in the table reads its own example, and the parser turns phrasings into facts with provenance."""
from __future__ import annotations

import pytest

from bot.core.reports.parse import parse
from bot.core.reports.phrasings import PHRASINGS, hits_in

PATH = "devs/issues/perf_example.md"


@pytest.mark.parametrize("phrasing", PHRASINGS, ids=lambda p: p.id)
def test_each_phrasing_reads_its_example(phrasing):
    hits = [h for h in hits_in(phrasing.example, 1) if h.phrasing == phrasing.id]
    assert hits, f"{phrasing.id} does not read its own example {phrasing.example!r}"
    first = hits[0]
    read = {name: getattr(first, name) for name in phrasing.reads}
    assert read == pytest.approx(phrasing.reads) if all(isinstance(v, float) for v in read.values()) \
        else read == phrasing.reads


def test_phrasing_ids_are_unique():
    assert len({p.id for p in PHRASINGS}) == len(PHRASINGS)


def record(text: str):
    return parse(PATH, text.encode()).record


@pytest.mark.parametrize("sentence, ratio, threads, derived", [
    ("It reaches only 3.8× at T8.", 2.11, 8, "ratio 2.11 derived from line 3: 'only 3.8× at T8' (8 / 3.8)"),
    ("8 threads give only 2.9x.", 2.76, 8, "'8 threads give only 2.9x' (8 / 2.9)"),
    ("T1 0.214 s, T10 0.031 s.", 1.45, 10, "'T1 0.214 s' and 'T10 0.031 s'"),
    ("Scaling is poor: ratio 12 / 4.0 = 3.0 at 12 threads.", 3.0, 12,
     "ratio 3 derived from line 3: 'ratio 12 / 4.0 = 3.0'"),
    ("Parallel speedup 5.1x with -T16.", 3.14, 16, "(16 / 5.1)"),
])
def test_par_claims_in_prose_become_a_ratio_that_says_where_it_came_from(sentence, ratio, threads, derived):
    facts = record(f"# Scaling\n\n{sentence}\n")
    assert (facts.track, facts.threads) == ("par", threads)
    assert facts.ratio == pytest.approx(ratio, abs=0.01)
    assert derived in facts.explain("ratio")


def test_a_speedup_of_c_threads_is_not_taken_for_the_language():
    facts = record("# Scaling\n\nC with 8 pthreads gets 7.6x at T8. The runtime reaches only 3.1x at T8.\n")
    assert facts.ratio == pytest.approx(2.58, abs=0.01) and "3.1x at T8" in facts.explain("ratio")


@pytest.mark.parametrize("byline, track, backend, host", [
    ("SEQ · this Linux box (2 vCPU) · runtime HEAD", "seq", "c", "this Linux box (2 vCPU)"),
    ("PAR · Metal · bench host mini-02", "par", "metal", "mini-02"),
    ("PAR, C backend, Ryzen 9 7950X (16C/32T)", "par", "c", "Ryzen 9 7950X (16C/32T)"),
    ("*PAR | CUDA | rtx-box*", "par", "cuda", "rtx-box"),
])
def test_a_byline_gives_track_backend_and_host(byline, track, backend, host):
    facts = record(f"# Something is slow\n\n{byline}\n\n## Context\n\nIt is slow.\n")
    assert (facts.track, facts.backend, facts.host) == (track, backend, host)
    assert facts.source_of("track") == "byline" and facts.line_of("track") == 3


def test_a_commit_subject_line_is_the_title():
    facts = record("perf: fib is 190x slower than C on one thread\n\nSEQ · dev-vm · HEAD\n\nBody text.\n")
    assert facts.title == "perf: fib is 190x slower than C on one thread" and facts.track == "seq"


@pytest.mark.parametrize("header, rows, ratio, threads", [
    ("| | T1 | T2 | T8 |", ["| bend (s) | 4.0 | 2.1 | 1.0 |"], 2.0, 8),
    ("| threads | 1 | 2 | 4 | 6 |", ["| bend time (s) | 7.84 | 4.10 | 3.27 | 2.70 |",
                                     "| speedup | 1 | 1.9 | 2.4 | 2.9 |"],
     2.07, 6),
    ("| threads | bend (s) | C pthreads (s) |", ["| 1 | 6.0 | 0.2 |", "| 12 | 1.5 | 0.02 |"], 3.0, 12),
    ("| run | time |", ["| bend -T1 | 900 ms |", "| bend -T8 | 300 ms |"], 2.67, 8),
    ("| implementation | threads | speedup |", ["| bend | 16 | 4.0x |"], 4.0, 16),
])
def test_par_tables_in_every_orientation(header, rows, ratio, threads):
    separator = "|" + "---|" * (header.count("|") - 1)
    table = "\n".join([header, separator, *rows])
    facts = record(f"# Scaling\n\nPAR · C backend · box\n\n## Measurements\n\n{table}\n")
    assert (facts.threads, facts.source_of("ratio")) == (threads, "table")
    assert facts.ratio == pytest.approx(ratio, abs=0.01)


def test_a_stated_ratio_matching_one_build_of_several_is_no_mismatch():
    table = ("| implementation | time (s) |\n| --- | --- |\n| bend (gcc build) | 0.90 |\n| bend (clang build) | 0.60 "
             "|\n"
             "| C (gcc -O2) | 0.10 |\n| C (clang -O2) | 0.09 |\n")
    text = f"# Builds\n\nSEQ · box\n\nWith gcc the language is 9.0x slower than C.\n\n## Measurements\n\n{table}"
    facts = record(text)
    assert facts.ratio == 9.0 and facts.table_ratio == pytest.approx(6.67, abs=0.01)
    assert 9.0 in facts.table_candidates


def test_a_gpu_thread_count_of_five_digits_is_a_thread_column():
    table = "| threads | 1 | 1024 | 16384 |\n| --- | --- | --- | --- |\n| bend (CUDA), s | 150 | 1.40 | 0.62 |\n"
    facts = record(f"# Scaling\n\nPAR · CUDA · rtx-box\n\n## Timing\n\n{table}")
    assert (facts.backend, facts.threads, facts.ratio) == ("cuda", 16384, pytest.approx(67.7, abs=0.1))


def test_the_c_runtime_named_in_prose_is_the_c_backend():
    facts = record("---\ntrack: par\nthreads: 24\n---\n# Leaf sum\n\nThreadripper, C runtime, -T24 is 11x faster.\n")
    assert facts.backend == "c" and facts.source_of("backend") == "prose"


def test_a_key_value_table_is_front_matter_written_as_a_table():
    text = ("# Bit count\n\n| | |\n| --- | --- |\n| track | SEQ |\n| backend | C |\n| machine | ci-7 |\n"
            "| claim | C is ~3.1× faster |\n| root cause | `prim.c: op_shr` boxes every shift |\n| fix | unknown |\n")
    facts = record(text)
    assert (facts.track, facts.backend, facts.ratio) == ("seq", "c", 3.1)
    assert facts.section("root_cause").text.startswith("`prim.c: op_shr`") and facts.section("fix").text == "unknown"


def test_thread_columns_may_name_the_backend_of_each_run():
    table = ("| | Metal `-t 1` | Metal `-t 4096` | C backend `-t 1` | C backend `-t 10` | C gcc -O2 |\n"
             "| --- | --- | --- | --- | --- | --- |\n| time | 31.4 s | 1.12 s | 4.02 s | 0.44 s | 0.21 s |\n")
    facts = record(f"---\ntrack: par\nbackend: metal\n---\n# Partitions\n\n## Measurements\n\n{table}")
    assert (facts.threads, facts.ratio) == (4096, pytest.approx(146, abs=1))


@pytest.mark.parametrize("cell, seconds", [("15 400", 15.4), ("15\u202f400 ms", 15.4), ("1 234,5 ms", 1.2345)])
def test_times_with_thousands_grouped_by_spaces(cell, seconds):
    from bot.core.reports.tables import seconds_of
    assert seconds_of(cell, 1e-3) == pytest.approx(seconds)


def test_question_and_answer_labels_open_the_section_the_question_names():
    facts = record("# Carry in a tuple\n\n**Q:** Root cause?\n**A:** the tuple is built on every call.\n\n"
                   "**Q:** Fix?\n**A:** Unknown.\n")
    assert "tuple is built" in facts.section("root_cause").text and "Unknown" in facts.section("fix").text


@pytest.mark.parametrize("heading, section", [("Ursache", "root_cause"), ("Lösung / Fix", "fix"),
                                              ("Messungen", "measurements"), ("Causa raíz", "root_cause"),
                                              ("Solución", "fix"), ("Mesures", "measurements")])
def test_headings_in_the_languages_agents_are_prompted_in(heading, section):
    from bot.core.reports.headings import section_of_heading
    assert section_of_heading(heading) == section


def test_a_chain_of_equalities_gives_its_last_number_and_the_ratio_its_thread_count():
    facts = record("# Queens\n\nPAR · C backend · xeon-12\n\nFrom 3 to 12 threads it flattens. "
                   "Ratio = 12 / (1480 / 361) = 12 / 4.10 = 2.93.\n")
    assert (facts.ratio, facts.threads) == (2.93, 12)


def test_a_claim_about_t16_is_not_borne_out_by_the_t8_row():
    table = ("| threads | bend (C backend) time | speedup |\n|---|---|---|\n| 1 | 1.000 s | 1.00x |\n"
             "| 8 | 0.263 s | 3.80x |\n| 16 | 0.250 s | 4.00x |\n")
    text = f"---\ntrack: par\nbackend: c\nthreads: 16\nratio: 2.1\n---\n# Tree sum\n\n## Measurements\n\n{table}"
    facts = record(text)
    assert facts.table_ratio == 4.0 and 2.1 not in [round(c, 1) for c in facts.table_candidates]


def test_next_steps_is_where_a_findings_style_report_puts_its_fix():
    from bot.core.reports.headings import section_of_heading
    assert section_of_heading("Next steps") == "fix" and section_of_heading("Findings") is None


@pytest.mark.parametrize("lead, section", [("**Why?** The steal", "root_cause"), ("**Cause.** A lazy dup",
                                                                                  "root_cause"),
                                           ("**Next steps / fix.** Unknown.", "fix"), ("**Fix?** Unknown.", "fix")])
def test_a_bold_lead_in_ending_in_a_question_or_full_stop_is_a_label(lead, section):
    assert record(f"# T\n\n{lead}\n").section(section) is not None


def test_a_threads_column_holding_run_names_gives_their_flag_not_the_runtime_version():
    table = ("| threads | time (s) |\n| --- | --- |\n| hvm4 -T1 | 4.18 |\n| hvm4 -T12 | 1.10 |\n"
             "| C (gcc -O2), 1 thread | 0.094 |\n")
    facts = record(f"# Squares\n\nPAR | C backend | ws-12\n\n## Numbers\n\n{table}")
    assert (facts.threads, facts.ratio) == (12, pytest.approx(3.16, abs=0.01))
