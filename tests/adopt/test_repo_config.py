"""`.perfbot.toml`: the full form parses; every mistake names its key and line."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from bot.core.config import ConfigFileError, RepoConfig, parse_repo_config

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

[[runners]]
name = "mini-1"
kind = "ssh"
host = "mini-1.lan"
user = "bench"
labels = ["c", "metal"]

[[runners]]
name = "rtx"
kind = "ssh"
host = "rtx-box"
labels = ["cuda"]
"""


def test_the_full_form_parses():
    config = parse_repo_config(FULL)
    assert config.build == ("make", "-j2") and config.run_language[2] == "{file}"
    assert config.suite.format == "tsv" and config.max_samples == 40 and config.min_samples == 5
    assert config.runner_for("metal").name == "mini-1" and config.runner_for("cuda").host == "rtx-box"


def test_an_empty_file_gives_the_defaults_with_the_local_runner():
    config = parse_repo_config("")
    assert config == RepoConfig() and config.runner_for("c").kind == "local" and config.suite is None


@pytest.mark.parametrize("text, key, line, words", [
    ("[verfiy]\nseq_threshold = 2\n", "verfiy", 1, "did you mean 'verify'"),
    ("[verify]\nseq_treshold = 2\n", "verify.seq_treshold", 2, "did you mean 'seq_threshold'"),
    ("[verify]\n\nseq_threshold = -1\n", "verify.seq_threshold", 3, "above 0"),
    ("[run]\nlanguage = \"bend run {file}\"\n", "run.language", 2, "list of arguments"),
    ("[run]\nlanguage = [\"bend\", \"{file}; rm -rf /\", \"{home}\"]\n", "run.language", 2,
     "unknown placeholder {home}"),
    ("[verify]\nmin_samples = 50\n", "verify.min_samples", 2, "larger than max_samples"),
    ("[[runners]]\nname = \"x\"\nkind = \"ssh\"\nlabels = [\"c\"]\n", "runners.host", 1, "needs a host"),
    ("[[runners]]\nname = \"x\"\nkind = \"ssh\"\nhost = \"-oProxyCommand=evil\"\nlabels = [\"c\"]\n",
     "runners.host", 4, "not a valid host"),
    ("[[runners]]\nname = \"x\"\nkind = \"local\"\nlabels = [\"gpu\"]\n", "runners.labels", 4, "among"),
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


def test_an_ssh_runner_may_name_its_remote_folder_and_only_a_plain_one():
    base = '[[runners]]\nname = "mini"\nkind = "ssh"\nhost = "mini.lan"\nlabels = ["c"]\n'
    assert parse_repo_config(base).runners[0].path is None  # the runner's default: ~/.cache/perfbot/<name>
    for good in ("~/bench/perfbot", "/srv/bench-1/perfbot_cache", "~/.cache/perf.bot"):
        assert parse_repo_config(base + f'path = "{good}"\n').runners[0].path == good
    for bad in ("bench", "~/../etc", "/srv/../etc", "/tmp/$(id)", "~/a b", "~root/x", "/", "~/", "/x;rm -rf ~",
                "-oProxyCommand=x", "/x\\ny"):
        with pytest.raises(ConfigFileError, match="absolute or ~/ folder") as info:
            parse_repo_config(base + f'path = "{bad}"\n')
        assert (info.value.key, info.value.line) == ("runners.path", 6)
    with pytest.raises(ConfigFileError, match="is for ssh runners"):
        parse_repo_config('[[runners]]\nname = "l"\nkind = "local"\npath = "/srv/x"\nlabels = ["c"]\n')


MILESTONES = """\
[[runners]]
name = "cuda-box"
kind = "local"
labels = ["cuda"]

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
    ('[[milestones]]\nname = "s"\nkind = "suite-passes"\nrunner = "cuda"\n', "milestones.runner", 4,
     "no [[runners]] is named 'cuda'"),
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
    assert config.build == ("{script}", "{checkout}", "{sha}") and config.build_script.path == ".perfbot/build.sh"
    config = parse_repo_config('[build]\nscript = "ci/build.py"\ncommand = ["python3", "{script}", "--rev={sha}"]\n')
    assert config.build == ("python3", "{script}", "--rev={sha}") and config.build_script.name == "build.py"
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


def test_sandbox_settings_and_a_runner_that_opts_out():
    config = parse_repo_config('[sandbox]\nreadable = ["/opt/datasets"]\nprocesses = 64\noutput_mb = 4\n'
                               '[[runners]]\nname = "mac"\nkind = "ssh"\nhost = "mac-mini"\nlabels = ["metal"]\n'
                               'sandbox = "none"\n')
    assert config.sandbox.readable == ("/opt/datasets",) and config.sandbox.processes == 64
    assert config.sandbox.output_mb == 4 and config.runners[0].sandbox == "none" and config.runners_named
    assert parse_repo_config("").runners[0].sandbox == "bwrap" and not parse_repo_config("").runners_named


@pytest.mark.parametrize("text, where", [
    ('[sandbox]\nreadable = ["/etc/ssl"]\n', ".perfbot.toml:2: sandbox.readable: '/etc/ssl' is never shown"),
    ('[sandbox]\nreadable = ["/var/lib/perfbot"]\n', "is never shown"),
    ('[sandbox]\nreadable = ["opt/x"]\n', "must be an absolute folder"),
    ('[sandbox]\nreadable = ["/opt/../root"]\n', "without '..'"),
    ('[sandbox]\nprocess = 5\n', "did you mean 'processes'"),
    ('[[runners]]\nname = "x"\nkind = "local"\nlabels = ["c"]\nsandbox = "off"\n', "'off' is not one of bwrap, none"),
    ('[[runners]]\nname = "x"\nkind = "actions"\nlabels = ["c"]\nsandbox = "none"\n', "does not apply to actions"),
])
def test_sandbox_settings_are_checked(text, where):
    with pytest.raises(ConfigFileError, match=re.escape(where)):
        parse_repo_config(text)


def test_the_bots_host_is_no_bench_host_unless_the_repository_names_it(tmp_path):
    from bot.adapters.runners import make_runner
    from bot.errors import UserError

    implicit = parse_repo_config("")
    with pytest.raises(UserError, match="never on the bot's own machine"):
        make_runner(implicit.runners[0], tmp_path, tmp_path / "cache", implicit, None, service=True)
    assert make_runner(implicit.runners[0], tmp_path, tmp_path / "cache", implicit, None).kind == "local"  # the CLI
    named = parse_repo_config('[[runners]]\nname = "here"\nkind = "local"\nlabels = ["c"]\n'
                              '[sandbox]\nreadable = ["/srv/perfbot/data"]\n')
    assert make_runner(named.runners[0], tmp_path, tmp_path / "cache", named, None, service=True).name == "here"
    with pytest.raises(UserError, match="would show /srv/perfbot, which holds perfbot's own files"):
        make_runner(named.runners[0], tmp_path, tmp_path / "cache", named, None, private=(Path("/srv/perfbot"),))
