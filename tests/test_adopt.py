"""Adopting perfbot on a runtime that is not the demo: `perfbot init` guesses, `perfbot check` says what to fix,
`perfbot verify` decides. Real git, real gcc, the real sandbox."""
from __future__ import annotations

import re

import git
import pytest
from click.testing import CliRunner

from bot.cli import main
from tests.adopt_project import build_calc


@pytest.fixture
def perfbot(tmp_path, monkeypatch):
    monkeypatch.setenv("PERFBOT_INSTANCE_DIR", str(tmp_path / "instance"))
    runner = CliRunner()
    return lambda *args: runner.invoke(main, list(args), catch_exceptions=False)


def test_init_and_check_on_a_makefile_runtime_with_a_subcommand(tmp_path, perfbot):
    repo = build_calc(tmp_path / "calc")
    init = perfbot("init", "--repo", str(repo.root))
    assert init.exit_code == 0, init.output
    assert "guessed build: make (from a Makefile)" in init.output
    assert "guessed run: ./bin/calc run --threads {threads} {file}" in init.output
    written = (repo.root / ".perfbot.toml").read_text()
    assert 'program = "main.calc"' in written and 'command = ["make"]' in written
    check = perfbot("check", "--repo", str(repo.root), "--config", str(repo.root / ".perfbot.toml"))
    assert check.exit_code == 0, check.output
    assert re.search(r"perf_slow_add\s+yes\s+yes\s+-", check.output), check.output
    again = perfbot("init", "--repo", str(repo.root))
    assert again.exit_code == 1 and "exists" in again.output


def test_check_names_the_key_and_line_of_each_failure(tmp_path, perfbot):
    repo = build_calc(tmp_path / "calc")
    config = tmp_path / "broken.toml"
    config.write_text('[build]\ncommand = ["make"]\n\n[run]\nlanguage = ["./bin/calc", "{file}"]\n'
                      '[[runners]]\nname = "here"\nkind = "local"\nlabels = ["c"]\n')
    check = perfbot("check", "--repo", str(repo.root), "--config", str(config))
    assert check.exit_code == 1 and re.search(r"perf_slow_add\s+NO\s+-", check.output), check.output
    assert "usage: calc run" in check.output and "fix: check [run] language (.perfbot.toml:5)" in check.output
    config.write_text('[build]\ncommand = ["make", "nothing"]\n')
    check = perfbot("check", "--repo", str(repo.root), "--config", str(config))
    assert check.exit_code == 1 and "build at" in check.output and "NO" in check.output
    assert "fix: set [build] command (.perfbot.toml:2)" in check.output
    config.write_text('[[runners]]\nname = "a"\nkind = "local"\nlabels = ["c"]\n[[runners]]\nname = "b"\n'
                      'kind = "ssh"\nhost = "-x"\nlabels = ["c"]\n')
    check = perfbot("check", "--repo", str(repo.root), "--config", str(config))
    assert check.exit_code == 1 and "broken.toml:8: runners.host: '-x' is not a valid host" in check.output


@pytest.mark.parametrize("binary, help_text, language, extension", [
    ("runtime", "usage: runtime [-T THREADS] [-s] PROGRAM.dl [N]", ("./runtime", "-T", "{threads}", "{file}"), "dl"),
    ("bin/bend", "Usage: bend run [--threads N] FILE.bend\n", ("./bin/bend", "run", "--threads", "{threads}", "{file}"),
     "bend"),
    ("x", "usage: x <file>\n  -j, --jobs N  worker threads\n", ("./x", "--jobs", "{threads}", "{file}"), None),
    ("x", "x: give it something", ("./x", "{file}"), None),
])
def test_init_reads_the_run_template_from_a_usage_line(binary, help_text, language, extension):
    from bot.core.init_guess import guess_run

    guess = guess_run(binary, help_text)
    assert (guess.language, guess.extension) == (language, extension)


def test_check_offers_a_normalize_rule_only_for_statistics_lines():
    from bot.core.check_advice import normalize_rules

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
