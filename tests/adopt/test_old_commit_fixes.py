"""What `check --revision OLD` proposes when OLD builds but its runs fail, decided from what the old checkout
holds (services/adopt/fixes.py), and the script it proposes run for real on a stand-in runtime: no compiler."""
from __future__ import annotations

import contextlib
import subprocess
from pathlib import Path

import pytest

from bot.adapters.runners.base import RunResult
from bot.core.config import parse_repo_config
from bot.core.config.lines import key_lines
from bot.core.reports.parse import parse
from bot.core.verify.failures import Failure, Kind
from bot.services.adopt import fixes
from bot.services.adopt.check import CheckResult, ReportCheck, check
from tests.adopt_project import sum_report

CONFIG = """[build]
command = ["true"]

[run]
language = LANGUAGE
program = "main.tl"
fence = ["rt"]
"""
# The runtime as the build leaves it: a stand-in that prints the arguments it was given.
STAND_IN = '#!/bin/sh\necho "$@"\n'


def proposed(tmp_path: Path, language: str, rejected: str, introduced: dict[str, str]) -> tuple[CheckResult, str]:
    text = CONFIG.replace("LANGUAGE", language)
    config = parse_repo_config(text)
    old = tmp_path / "old"  # the old checkout: its source names none of the options added since
    old.mkdir()
    (old / "rt.c").write_text('int main(int argc, char **argv) { if (!strcmp(argv[1], "-v")) return 0; }\n')
    report = ReportCheck("perf_slow_x", runs=False,
                         failure=Failure(Kind.UNKNOWN_OPTION, f"Unknown option: {rejected}", flag=rejected))
    result = CheckResult("0" * 40, True, reports=[report])
    result.build_fixes = fixes.older_fixes(config, key_lines(text), result, old, introduced.get)
    script = fixes.script_of(result.build_fixes)
    assert script is not None, result.build_fixes
    return result, script


def ran_through(tmp_path: Path, script: str, *args: str) -> str:
    """What the runtime receives after the proposed script built a checkout of an old commit."""
    checkout = tmp_path / "checkout"
    checkout.mkdir(parents=True)
    (checkout / "rt").write_text(STAND_IN)
    (checkout / "rt").chmod(0o755)
    (tmp_path / "build.sh").write_text(script)
    subprocess.run(["sh", str(tmp_path / "build.sh"), str(checkout), "0" * 40], check=True, timeout=60)
    return subprocess.run([str(checkout / "rt"), *args], capture_output=True, text=True, check=True,
                          timeout=60).stdout


@pytest.mark.parametrize("language, rejected, passed", [
    ('["./rt", "-T{threads}", "{file}"]', "-T1", "-T4"),  # the runtime: `Unknown option: -T1`
    ('["./rt", "--threads={threads}", "{file}"]', "--threads=1", "--threads=4"),
    ('["./rt", "-T", "{threads}", "{file}"]', "-T", "-T 4"),
])
def test_an_option_an_old_commit_rejects_is_dropped_there_however_it_is_written(tmp_path, language, rejected,
                                                                                passed):
    flag = rejected.split("=")[0].rstrip("1")
    result, script = proposed(tmp_path, language, rejected, {f'"{flag}': "abc123def456 (rt: threads)"})
    assert result.reports[0].fixes[0].startswith(f"{flag} is in [run] language, and the runtime takes it only "
                                                 "since abc123def456 (rt: threads)"), result.reports[0].fixes
    assert 'script = ".perfbot/build.sh"' in result.build_fixes[0]
    assert ran_through(tmp_path, script, *passed.split(), "main.tl") == "main.tl\n"


def test_an_option_without_a_value_is_dropped_alone_and_the_program_file_stays(tmp_path):
    """`-s` (statistics) came after the old commit too: the wrapper drops it, not the file after it."""
    result, script = proposed(tmp_path, '["./rt", "-T{threads}", "-s", "{file}", "-v"]', "-T1",
                              {'"-T': "abc (rt: -T)", '"-s': "def (rt: -s)"})
    assert [fix.split(" is in ")[0] for fix in result.reports[0].fixes[:2]] == ["-s", "-T"]
    assert ran_through(tmp_path, script, "-T4", "-s", "main.tl", "-v") == "main.tl -v\n"


def test_the_options_of_a_run_template_and_whether_a_value_follows():
    assert fixes.language_options(("./rt", "-T{threads}", "--mem=2G", "-s", "{file}", "-x", "--jobs", "{threads}",
                                   "--out", "-q")) == \
        {"-T": True, "--mem": True, "-s": False, "-x": False, "--jobs": True, "--out": False, "-q": False}


class OldRuntime:
    """A runner at an old commit whose runtime (getopt_long: no `"--threads` in its source) lists its options in
    --help and, not knowing --threads, opens it as the program file."""
    memory_mb = 1024

    def __init__(self, workspace: Path, says: str = "rt: cannot read {}\n"):
        self.workspace, self.ran, self.says = workspace, [], says

    def exclusive(self):
        return contextlib.nullcontext()

    def prepare(self, sha):
        (self.workspace / "rt.c").write_text('struct option options[] = {{"verbose", no_argument, 0, 1}};\n')
        return self.workspace

    def run_dir(self, workspace, slug):
        (workspace / slug).mkdir(exist_ok=True)
        return workspace / slug

    def write_file(self, path, text):
        path.write_text(text)

    def run(self, argv, cwd, timeout):
        self.ran.append(argv[1:])
        if argv[1] in ("--help", "-h"):
            return RunResult(0, "usage: rt [--verbose] FILE\n", "", 0.0)
        return RunResult(1, "", self.says.format(argv[1]), 0.0)


def test_an_option_the_old_runtimes_help_does_not_list_is_dropped_there_since_the_commit_that_added_it(tmp_path):
    text = CONFIG.replace("LANGUAGE", '["./rt", "--verbose", "--threads", "{threads}", "{file}"]')
    config = parse_repo_config(text)
    record = parse("devs/issues/perf_slow_x.md", sum_report("rt").encode(), config.reading).record
    runner = OldRuntime(tmp_path)
    texts = {"--threads": "abc123def456 (rt: --threads N)", "--verbose": "0123456789ab (rt: --verbose)"}
    result = check(config, key_lines(text), runner, "0" * 40, [record], older=True, introduced=texts.get)
    assert ["--help"] in runner.ran and ["-h"] in runner.ran  # asked, at this commit, only because a run failed
    assert result.reports[0].fixes[0].startswith("--threads is in [run] language, and the runtime takes it only "
                                                 "since abc123def456 (rt: --threads N)"), result.reports[0].fixes
    assert result.script is not None and "'\"--verbose'" not in result.script  # its help lists --verbose
    assert ran_through(tmp_path / "x", result.script, "--verbose", "--threads", "4", "main.tl") == "--verbose main.tl\n"


def test_an_option_the_default_branch_rejects_is_named_with_the_line_that_passes_it(tmp_path):
    text = CONFIG.replace("LANGUAGE", '["./rt", "--jobs", "{threads}", "{file}"]')
    runner = OldRuntime(tmp_path, "rt: unrecognized option '{}'\n")
    record = parse("devs/issues/perf_slow_x.md", sum_report("rt").encode(), parse_repo_config(text).reading).record
    result = check(parse_repo_config(text), key_lines(text), runner, "0" * 40, [record], introduced={}.get)
    assert result.reports[0].fixes == ["the runtime does not take --jobs: take it out of [run] language "
                                       f"(.perfbot.toml:5) (it ran {tmp_path}/rt --jobs 1 "
                                       f"{tmp_path}/perf_slow_x/main.tl), "
                                       "or use the option its --help names"], result.reports[0].fixes
    assert result.script is None and ["--help"] not in runner.ran  # the default branch: no script, no old help
