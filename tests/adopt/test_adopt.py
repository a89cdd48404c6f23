"""Adopting perfbot on a runtime that is not the demo: `perfbot init` guesses, `perfbot check` says what to fix,
`perfbot verify` decides. Real git, real gcc, the real sandbox (docs/adopt.md's own walkthrough is
test_walkthrough.py)."""
from __future__ import annotations

import os
import re
import textwrap

import git
import pytest
from click.testing import CliRunner

from bot.cli import main
from tests.adopt_project import OUTPUT, build_calc, build_tally


@pytest.fixture
def perfbot(tmp_path, monkeypatch):
    monkeypatch.setenv("PERFBOT_INSTANCE_DIR", str(tmp_path / "instance"))
    runner = CliRunner()
    return lambda *args: runner.invoke(main, list(args), catch_exceptions=False)


def pasted(output: str, after: str) -> str:
    """The text a fix says to paste: the indented lines under the fix line containing `after`."""
    lines = output.splitlines()
    start = next(n for n, line in enumerate(lines) if after in line and ("fix:" in line or "note:" in line))
    block = []
    for line in lines[start + 1:]:
        if not line.startswith("        "):
            break
        block.append(line)
    return textwrap.dedent("\n".join(block)) + "\n"


def test_init_and_check_on_a_makefile_runtime_with_a_subcommand(tmp_path, perfbot):
    repo = build_calc(tmp_path / "calc")
    init = perfbot("init", "--repo", str(repo.root))
    assert init.exit_code == 0, init.output
    assert "guessed build: make (from a Makefile)" in init.output
    assert "guessed run: ./bin/calc run --threads {threads} {file}" in init.output
    written = (repo.root / ".perfbot.toml").read_text()
    assert 'program = "main.calc"' in written and 'fence = ["calc"]' in written and 'command = ["make"]' in written
    check = perfbot("check", "--repo", str(repo.root), "--config", str(repo.root / ".perfbot.toml"))
    assert check.exit_code == 0, check.output
    assert re.search(r"perf_slow_add\s+yes\s+yes\s+-", check.output), check.output
    again = perfbot("init", "--repo", str(repo.root))
    assert again.exit_code == 1 and "exists" in again.output


def test_check_names_the_key_and_line_of_each_failure(tmp_path, perfbot):
    repo = build_calc(tmp_path / "calc")
    config = tmp_path / "broken.toml"
    config.write_text('[build]\ncommand = ["make"]\n\n[run]\nlanguage = ["./bin/calc", "{file}"]\nfence = ["calc"]\n'
                      '[verify]\nmin_samples = 5\n')
    check = perfbot("check", "--repo", str(repo.root), "--config", str(config))
    assert check.exit_code == 1 and re.search(r"perf_slow_add\s+NO\s+-", check.output), check.output
    assert "usage: calc run" in check.output and "fix: check [run] language (.perfbot.toml:5)" in check.output
    config.write_text('[build]\ncommand = ["make", "nothing"]\n')
    check = perfbot("check", "--repo", str(repo.root), "--config", str(config))
    assert check.exit_code == 1 and "build at" in check.output and "NO" in check.output
    assert "fix: set [build] command (.perfbot.toml:2)" in check.output
    (repo.root / "fail.sh").write_text("#!/bin/sh\necho no >&2\nexit 3\n")
    config.write_text('[build]\nscript = "fail.sh"\n')
    check = perfbot("check", "--repo", str(repo.root), "--config", str(config))
    assert check.exit_code == 1 and "fix: the build script fail.sh ([build] script (.perfbot.toml:2)) fails" \
        in check.output, check.output
    config.write_text('[verify]\nmin_samples = 5\n\n[[runners]]\nname = "b"\nkind = "local"\nsandbox = "none"\n'
                      'labels = ["c"]\n')
    check = perfbot("check", "--repo", str(repo.root), "--config", str(config))
    assert check.exit_code == 1 and "broken.toml:4: runners: not here" in check.output, check.output
    assert "[[runners]] in instance/perfbot.toml" in check.output


def test_a_runtime_with_statistics_and_a_renamed_define_reaches_a_verdict(tmp_path, monkeypatch):
    """tally's build must pass a define its own error names (renamed HEAP_CELLS -> HEAP_WORDS after `old`), and it
    prints statistics lines on every run: init, check's fixes pasted, the per-revision script, then verify."""
    repo, heads = build_tally(tmp_path / "tally")
    root, config = str(repo.root), repo.root / ".perfbot.toml"
    monkeypatch.setenv("PERFBOT_INSTANCE_DIR", str(tmp_path / "instance"))
    perfbot = lambda *args: CliRunner().invoke(main, list(args), catch_exceptions=False)  # noqa: E731
    git = lambda *args: repo.repo.git.execute(["git", *args])  # noqa: E731 as a person types it
    # 1. init: the build's own error names the heap define; --help names the file extension and --jobs; the
    # report names the fence tag.
    init = perfbot("init", "--repo", root)
    assert init.exit_code == 0, init.output
    assert "-DHEAP_WORDS=65536 as its build error asks" in init.output
    assert "guessed run: ./tally --jobs {threads} {file}" in init.output
    assert 'program = "main.tl"' in config.read_text() and 'fence = ["tally"]' in config.read_text()
    # 2. check: the runtime prints statistics lines the C translation does not; check writes the rule.
    check = perfbot("check", "--repo", root, "--config", str(config))
    assert check.exit_code == 1 and re.search(r"perf_slow_tally\s+yes\s+NO", check.output), check.output
    rule = pasted(check.output, "statistics lines")
    assert rule == "output = \"normalize\"\nnormalize = [['(?m)^heap words.*\\n?', ''], ['(?m)^steps.*\\n?', '']]\n"
    metrics = pasted(check.output, "to record them")
    config.write_text(config.read_text().replace("[run]", "[run]\n" + rule + metrics, 1)
                      .replace("[verify]", '[verify]\nmeasure = "instructions"', 1))
    check = perfbot("check", "--repo", root, "--config", str(config))
    assert check.exit_code == 0 and re.search(r"perf_slow_tally\s+yes\s+yes\s+yes", check.output), check.output
    git("add", ".perfbot.toml")
    git("commit", "-q", "-m", "adopt perfbot")
    # 3. an older commit: the define had another name; check writes the build script that builds both.
    check = perfbot("check", "--repo", root, "--revision", heads["old"])
    assert check.exit_code == 1 and "HEAP_CELLS" in check.output, check.output
    script = pasted(check.output, "reading:")
    assert script.startswith("#!/bin/sh") and "define=HEAP_CELLS" in script
    (repo.root / ".perfbot").mkdir()
    (repo.root / ".perfbot" / "build.sh").write_text(script)
    os.chmod(repo.root / ".perfbot" / "build.sh", 0o755)
    text = config.read_text()
    config.write_text(re.sub(r"command = \[.*\n", pasted(check.output, "drop [build] command"), text, count=1))
    git("add", ".perfbot.toml", ".perfbot/build.sh")
    git("commit", "-q", "-m", "perfbot: a build script for every revision")
    for revision in (heads["old"], "main"):
        check = perfbot("check", "--repo", root, "--revision", revision)
        assert check.exit_code == 0, check.output
    # 4. verify, counted in instructions: the fix branch fixes it, main alone still shows the slowdown.
    verdict = perfbot("verify", "perf_slow_tally", "--repo", root)
    assert verdict.exit_code == 0 and re.search(r"^fixed:", verdict.output, re.M), verdict.output
    verdict = perfbot("verify", "perf_slow_tally", "--repo", root, "--head", "main")
    assert verdict.exit_code == 0 and re.search(r"^reproduced:", verdict.output, re.M), verdict.output
    assert str(OUTPUT) in (repo.root / "devs/issues/perf_slow_tally.md").read_text()


@pytest.mark.parametrize("binary, help_text, language, extension", [
    ("runtime", "usage: runtime [-T THREADS] [-s] PROGRAM.dl [N]", ("./runtime", "-T", "{threads}", "{file}"), "dl"),
    ("bin/bend", "Usage: bend run [--threads N] FILE.bend\n", ("./bin/bend", "run", "--threads", "{threads}", "{file}"),
     "bend"),
    ("x", "usage: x <file>\n  -j, --jobs N  worker threads\n", ("./x", "--jobs", "{threads}", "{file}"), None),
    ("x", "x: give it something", ("./x", "{file}"), None),
    ("hvm", "usage: hvm [-TN] FILE.hvm", ("./hvm", "-T{threads}", "{file}"), "hvm"),  # one argument, as the help has it
    ("x", "usage: x [--threads=N] FILE.x", ("./x", "--threads={threads}", "{file}"), "x"),
])
def test_init_reads_the_run_template_from_a_usage_line(binary, help_text, language, extension):
    from bot.core.config.init_guess import guess_run

    guess = guess_run(binary, help_text)
    assert (guess.language, guess.extension) == (language, extension)


def test_check_offers_a_normalize_rule_only_for_statistics_lines():
    from bot.core.config.check_advice import normalize_rules

    assert normalize_rules("42\n- ITRS: 9\n", "42\n") == [("(?m)^- ITRS.*\\n?", "")]
    assert normalize_rules("42\n", "43\n") == []  # a different result is never normalised away
    assert normalize_rules("42\nbanner v1\n", "42\n") == []


def test_a_new_report_starts_from_a_program_the_configured_runtime_runs(tmp_path, perfbot):
    """`perfbot new` on the demo (its [new] table) and on a runtime whose .perfbot.toml has none."""
    made = perfbot("demo", str(tmp_path / "demo"))
    assert made.exit_code == 0, made.output
    demo = git.Repo(tmp_path / "demo")
    new = perfbot("new", "perf_try_it", "--track", "seq", "--dir", str(tmp_path / "demo/devs/issues"))
    assert new.exit_code == 0 and "note:" not in new.output, new.output
    text = (tmp_path / "demo/devs/issues/perf_try_it.md").read_text()
    assert "```bend\n# the sum of i*i for i < 1000" in text and "`./runtime -T1 -s main.dl`" in text
    demo.git.add("devs/issues/perf_try_it.md")
    demo.git.commit("-q", "-m", "a new report")
    check = perfbot("check", "--repo", str(tmp_path / "demo"))
    assert check.exit_code == 0 and re.search(r"perf_try_it\s+yes\s+yes\s+yes", check.output), check.output
    repo = build_calc(tmp_path / "calc")
    (repo.root / ".perfbot.toml").write_text('[run]\nlanguage = ["./bin/calc", "run", "{file}"]\n')
    plain = perfbot("new", "perf_plain", "--track", "seq", "--dir", str(repo.root / "devs/issues"))
    assert plain.exit_code == 0 and "add a [new] table" in plain.output
    (repo.root / ".perfbot.toml").write_text('[run]\nlanguage = ["./bin/calc", "run", "{file}"]\nprogram = '
                                             '"main.calc"\n'
                                             'fence = ["calc"]\n[new]\nprogram = "add 1000"\n'
                                             'translation = "int main(void) { return 0; }"\nprints = "499500"\n')
    own = perfbot("new", "perf_own", "--track", "seq", "--dir", str(repo.root / "devs/issues"))
    assert own.exit_code == 0 and "note:" not in own.output, own.output  # its ```calc block is the program
    assert "```calc\nadd 1000\n```" in (repo.root / "devs/issues/perf_own.md").read_text()


CMAKE_RUNTIME = r"""#include <stdio.h>
#include <string.h>
int main(int argc, char **argv) {
  if (argc > 1 && !strcmp(argv[1], "--help")) { puts("usage: tiny [--threads N] PROGRAM.tn"); return 0; }
  if (argc < 2) { fputs("usage: tiny [--threads N] PROGRAM.tn\n", stderr); return 2; }
  FILE *f = fopen(argv[argc - 1], "r");
  long n = 0, s = 0;
  if (f) { if (fscanf(f, "sum %ld", &n) != 1) n = 0; fclose(f); }
  for (long i = 1; i <= n; i++) s += i;
  printf("%ld\n", s);
  return 0;
}
"""


def test_init_builds_a_cmake_project_in_the_sandbox_and_finds_its_runtime(tmp_path, perfbot):
    """cmake comes from scripts/ensure-build-tools; the build runs contained, as every build does."""
    from tests.gitrepo import RepoBuilder

    repo = RepoBuilder(tmp_path / "tiny")
    repo.write("CMakeLists.txt", "cmake_minimum_required(VERSION 3.10)\nproject(tiny C)\nadd_executable(tiny main.c)\n")
    repo.write("main.c", CMAKE_RUNTIME).commit("a runtime built with CMake")
    init = perfbot("init", "--repo", str(repo.root))
    assert init.exit_code == 0, init.output
    assert "guessed build: sh -c cmake -S . -B build" in init.output and "(from CMakeLists.txt)" in init.output
    assert "guessed runtime: ./build/tiny, programs *.tn" in init.output
    assert "guessed run: ./build/tiny --threads {threads} {file}" in init.output


def test_a_cargo_project_is_guessed_as_cargo_build_of_its_package():
    """The guess alone: building needs cargo where the sandbox shows it (a system install, not ~/.cargo)."""
    from bot.core.config.init_guess import guess_build

    guess = guess_build({"Cargo.toml": '[package]\nname = "hvm-rt"\nversion = "0.1.0"\n', "src": None}, "gcc")
    assert guess.command == ("cargo", "build", "--release") and guess.binary_hint == "target/release/hvm-rt"
    assert guess_build({"Cargo.toml": "[workspace]\n"}, "gcc").binary_hint is None
