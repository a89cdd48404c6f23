"""`perfbot check` on a runtime that is not the demo: real git, real gcc, the real sandbox."""
from __future__ import annotations

import re

import pytest
from click.testing import CliRunner

from bot.cli import main
from tests.adopt_project import build_calc


@pytest.fixture
def perfbot(tmp_path, monkeypatch):
    monkeypatch.setenv("PERFBOT_INSTANCE_DIR", str(tmp_path / "instance"))
    runner = CliRunner()
    return lambda *args: runner.invoke(main, list(args), catch_exceptions=False)


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


def test_check_offers_a_normalize_rule_only_for_statistics_lines():
    from bot.core.check_advice import normalize_rules

    assert normalize_rules("42\n- ITRS: 9\n", "42\n") == [("(?m)^- ITRS.*\\n?", "")]
    assert normalize_rules("42\n", "43\n") == []  # a different result is never normalised away
    assert normalize_rules("42\nbanner v1\n", "42\n") == []
