"""`.perfbot.toml`: the full form parses; every mistake names its key and line."""
from __future__ import annotations

import pytest

from bot.core.config import ConfigFileError, PerfbotFile, parse_repo_config

FULL = """\
[build]
command = ["make", "-j2"]

[run]
language = ["./bin/bend", "run-c", "{file}", "--threads", "{threads}"]
c_compile = ["gcc", "-O2", "-o", "{out}", "{file}"]

[suite]
command = ["make", "bench"]
format = "tsv"

[verify]
seq_threshold = 2.0
max_samples = 40
"""


def test_the_full_form_parses():
    config = parse_repo_config(FULL)
    assert config.build.argv == ("make", "-j2") and config.run.language[2] == "{file}"
    assert config.suite.format == "tsv" and config.verify.max_samples == 40 and config.verify.min_samples == 5


def test_an_empty_file_gives_the_defaults_with_the_local_runner():
    config = parse_repo_config("")
    assert config == PerfbotFile() and config.runner_for("c").kind == "local" and config.suite is None


@pytest.mark.parametrize("text, key, line, words", [
    ("[verfiy]\nseq_threshold = 2\n", "verfiy", 1, "did you mean 'verify'"),
    ("[verify]\nseq_treshold = 2\n", "verify.seq_treshold", 2, "did you mean 'seq_threshold'"),
    ("[verify]\n\nseq_threshold = -1\n", "verify.seq_threshold", 3, "above 0"),
    ("[run]\nlanguage = \"bend run {file}\"\n", "run.language", 2, "list of arguments"),
    ("[run]\nlanguage = [\"bend\", \"{file}; rm -rf /\", \"{home}\"]\n", "run.language", 2,
     "unknown placeholder {home}"),
    ("[verify]\nmin_samples = 50\n", "verify.min_samples", 2, "larger than max_samples"),
    ("[build]\ncommand = [\"make\"\n", "(syntax)", 2, ""),
])
def test_mistakes_name_the_key_and_the_line(text, key, line, words):
    with pytest.raises(ConfigFileError) as info:
        parse_repo_config(text)
    assert (info.value.key, info.value.line) == (key, line), str(info.value)
    assert words in str(info.value)


def test_the_suite_takes_a_sample_count_and_its_own_timeout():
    config = parse_repo_config('[suite]\ncommand = ["./bench"]\nsamples = 9\ntimeout_seconds = 600\n')
    assert (config.suite.samples, config.suite.timeout_seconds, config.suite.format) == (9, 600, "json")
    assert parse_repo_config('[suite]\ncommand = ["make", "-s", "bench"]\n').suite.samples == 5
    for text, words in (("samples = 0", "positive whole number"), ('samples = "5"', "positive whole number"),
                        ("sample = 5", "did you mean 'samples'")):
        with pytest.raises(ConfigFileError, match=words) as info:
            parse_repo_config(f'[suite]\ncommand = ["./bench"]\n{text}\n')
        assert info.value.line == 3 and info.value.key.startswith("suite.")


MILESTONES = """\
[[milestones]]
name = "every seq report at or under 2x"
kind = "seq-near-c"

[[milestones]]
name = "metal near C"
kind = "seq-near-c"
backend = "metal"
threshold = 1.5
due = 2026-12-31

[[milestones]]
name = "par scaling"
kind = "par-speedup"
reports = ["perf_fib_par", "perf_vec_par"]
target = 6

[[milestones]]
name = "the suite passes on cuda"
kind = "suite-passes"
runner = "cuda-box"

[digest]
schedule = "Monday 9:05"
timezone = "Europe/Berlin"
window_days = 14
label = "perf digest"
"""


def test_milestones_and_the_digest_parse():
    from datetime import date

    from bot.core.config import DigestSchedule, Milestone

    config = parse_repo_config(MILESTONES)
    assert config.milestones == (
        Milestone(name="every seq report at or under 2x", kind="seq-near-c"),
        Milestone(name="metal near C", kind="seq-near-c", due=date(2026, 12, 31), threshold=1.5, backend="metal"),
        Milestone(name="par scaling", kind="par-speedup", reports=("perf_fib_par", "perf_vec_par"), target=6.0),
        Milestone(name="the suite passes on cuda", kind="suite-passes", runner="cuda-box"))
    digest = config.digest
    assert (digest.schedule, digest.timezone, digest.window_days, digest.label) == ("mon 09:05", "Europe/Berlin", 14,
                                                                                   "perf digest")
    assert digest.declared and not parse_repo_config("").digest.declared
    assert parse_repo_config("").digest == DigestSchedule() and parse_repo_config("").milestones == ()
    for written, normalized in (("sun 23:59", "sun 23:59"), ("TUE 0:00", "tue 00:00"), ("friday  17:30", "fri 17:30")):
        assert parse_repo_config(f'[digest]\nschedule = "{written}"\n').digest.schedule == normalized


_SEQ = '[[milestones]]\nname = "a"\nkind = "seq-near-c"\n'


@pytest.mark.parametrize("text, key, line, words", [
    (_SEQ + '\n[[milestones]]\nname = "b"\nkind = "seq-near-c"\ntreshold = 2\n', "milestones.treshold", 8,
     "did you mean 'threshold'"),  # the second table's line, not the first's
    ('[[milestones]]\nkind = "seq-near-c"\n', "milestones.name", 1, "is required"),
    ('[[milestones]]\nname = "p"\nkind = "par-speedup"\nreports = ["perf_a"]\n', "milestones.target", 1,
     "required for par-speedup"),
    ('[[milestones]]\nname = "p"\nkind = "par-speedup"\nreports = ["perf_a"]\ntarget = 4\nthreshold = 2\n',
     "milestones.threshold", 6, "is for seq-near-c milestones, not par-speedup"),
    ('[[milestones]]\nname = "p"\nkind = "fast"\n', "milestones.kind", 3, "not one of seq-near-c"),
    (_SEQ + 'due = "2026-12-31"\n', "milestones.due", 4, "TOML date"),
    (_SEQ + "due = 2026-12-31T10:00:00Z\n", "milestones.due", 4, "no time"),
    (_SEQ + 'backend = "tpu"\n', "milestones.backend", 4, "not one of c, metal, cuda"),
    (_SEQ + "threshold = 0\n", "milestones.threshold", 4, "above 0"),
    ('[[milestones]]\nname = "p"\nkind = "par-speedup"\nreports = ["fib"]\ntarget = 4\n', "milestones.reports", 4,
     "report slugs"),
    ('[[milestones]]\nname = "p"\nkind = "par-speedup"\nreports = ["perf_a", "perf_a"]\ntarget = 4\n',
     "milestones.reports", 4, "twice"),
    (_SEQ + _SEQ, "milestones.name", 5, "two milestones are named 'a'"),
    ('[[milestones]]\nname = "line\\nbreak"\nkind = "seq-near-c"\n', "milestones.name", 2, "one-line name"),
    ('[milestones]\nname = "a"\n', "milestones", 1, "[[milestones]] table"),
    ('[digest]\nschedule = "funday 09:00"\n', "digest.schedule", 2, "weekday and a 24-hour time"),
    ('[digest]\nschedule = "mon 24:00"\n', "digest.schedule", 2, "weekday and a 24-hour time"),
    ('[digest]\nschedule = "mo 09:00"\n', "digest.schedule", 2, "weekday and a 24-hour time"),
    ('[digest]\n\ntimezone = "Europe/Berln"\n', "digest.timezone", 3, "did you mean 'Europe/Berlin'"),
    ('[digest]\ntimezone = "../../etc/passwd"\n', "digest.timezone", 2, "not an IANA time zone"),
    ('[digest]\ntimezone = "America"\n', "digest.timezone", 2, "not an IANA time zone"),
    ('[digest]\nwindow_days = 0\n', "digest.window_days", 2, "positive whole number"),
    ('[digest]\nlabel = "a,b"\n', "digest.label", 2, "must be a label"),
    ('[digest]\nwindows_days = 7\n', "digest.windows_days", 2, "did you mean 'window_days'"),
    ('[[digest]]\nlabel = "d"\n', "digest", 1, "write it as [digest]"),
])
def test_milestone_and_digest_mistakes_name_the_key_and_the_line(text, key, line, words):
    with pytest.raises(ConfigFileError) as info:
        parse_repo_config(text)
    assert (info.value.key, info.value.line) == (key, line), str(info.value)
    assert words in str(info.value)


def test_a_build_may_name_a_script_and_use_the_checkout_sha_and_script_placeholders():
    config = parse_repo_config('[build]\nscript = ".perfbot/build.sh"\n')
    assert config.build.argv == ("{script}", "{checkout}", "{sha}") and config.build_script.path == ".perfbot/build.sh"
    config = parse_repo_config('[build]\nscript = "ci/build.py"\ncommand = ["python3", "{script}", "--rev={sha}"]\n')
    assert config.build.argv == ("python3", "{script}", "--rev={sha}") and config.build_script.name == "build.py"
    assert parse_repo_config('[build]\ncommand = ["make", "-C", "{checkout}"]\n').build_script is None
    for bad in ("/etc/build.sh", "../build.sh", "a/./b.sh", "a b.sh", "x;rm", "", "dir/", 3):
        value = f'"{bad}"' if isinstance(bad, str) else bad
        with pytest.raises(ConfigFileError, match="must be a path inside the repository") as info:
            parse_repo_config(f"[build]\nscript = {value}\n")
        assert (info.value.key, info.value.line) == ("build.script", 2)
    with pytest.raises(ConfigFileError, match=r"uses {script} but \[build\] names no script") as info:
        parse_repo_config('[build]\ncommand = ["sh", "{script}"]\n')
    assert info.value.key == "build.command"
    with pytest.raises(ConfigFileError, match=r"never runs the script ci/b.sh: put {script} in it") as info:
        parse_repo_config('[build]\nscript = "ci/b.sh"\ncommand = ["make"]\n')
    assert (info.value.key, info.value.line) == ("build.command", 3)
    with pytest.raises(ConfigFileError, match=r"unknown placeholder {file}; use {checkout}, {sha} or {script}"):
        parse_repo_config('[build]\ncommand = ["make", "{file}"]\n')
