"""Adoption from scratch on runtimes laid out as teams lay them out: `perfbot init`, then `perfbot check` until it
exits 0, with no edit but what init and check printed. Real git, real gcc, the real sandbox."""
from __future__ import annotations

import re

import pytest
from click.testing import CliRunner

from bot.cli import main
from tests.adopt.test_adopt import pasted
from tests.adopt_project import (
    build_as_the_issue_found_it,
    build_flags_across_commits,
    build_in_subfolder,
    build_readme_only,
    build_reserving,
    sum_report,
)


@pytest.fixture
def perfbot(tmp_path, monkeypatch):
    monkeypatch.setenv("PERFBOT_INSTANCE_DIR", str(tmp_path / "instance"))
    runner = CliRunner()
    return lambda *args: runner.invoke(main, list(args), catch_exceptions=False)


def adopted(perfbot, root) -> str:
    """init, then check of the file init wrote; the file's text."""
    init = perfbot("init", "--repo", str(root))
    assert init.exit_code == 0, init.output
    text = (root / ".perfbot.toml").read_text()
    assert "[[runners]]" not in text and "[sandbox]" not in text  # the operator's file holds those
    return text


def test_a_makefile_in_a_first_level_folder_passes_check_untouched(tmp_path, perfbot):
    repo = build_in_subfolder(tmp_path / "calc")
    text = adopted(perfbot, repo.root)
    assert 'command = ["make", "-C", "runtime"]' in text and 'fence = ["calc"]' in text
    assert 'language = ["./runtime/bin/calc", "run", "--threads", "{threads}", "{file}"]' in text
    check = perfbot("check", "--repo", str(repo.root), "--config", str(repo.root / ".perfbot.toml"))
    assert check.exit_code == 0 and re.search(r"perf_slow_add\s+yes\s+yes", check.output), check.output


def test_a_build_only_the_readme_names_passes_check_untouched(tmp_path, perfbot):
    repo = build_readme_only(tmp_path / "adder")
    text = adopted(perfbot, repo.root)
    # The clone and its `cd` are the README's reader's, not perfbot's: it builds in the clone already.
    assert 'command = ["sh", "-c", "cd clang && gcc -O2 -o adder main.c eval.c"]' in text, text
    assert 'language = ["./clang/adder", "--workers", "{threads}", "{file}"]' in text
    assert 'program = "main.add"' in text and 'fence = ["adder"]' in text
    check = perfbot("check", "--repo", str(repo.root), "--config", str(repo.root / ".perfbot.toml"))
    assert check.exit_code == 0 and re.search(r"perf_slow_add\s+yes\s+yes", check.output), check.output


def test_a_runtime_whose_flags_and_syntax_are_newer_than_an_old_commit(tmp_path, perfbot):
    repo, old = build_flags_across_commits(tmp_path / "stack")
    root = str(repo.root)
    text = adopted(perfbot, repo.root)
    assert 'language = ["./stack", "-T", "{threads}", "{file}"]' in text
    assert perfbot("check", "--repo", root, "--config", str(repo.root / ".perfbot.toml")).exit_code == 0
    repo.repo.git.add(".perfbot.toml")
    repo.repo.git.commit("-q", "-m", "adopt perfbot")
    check = perfbot("check", "--repo", root, "--revision", old)
    assert check.exit_code == 1, check.output
    assert "Unknown option: -T" in check.output and "the runtime takes it only since" in check.output
    assert "(stack: -T N, and `sum N`)" in check.output  # the commit that introduced it, by its subject
    assert "fix: check [run] language" not in check.output
    script = pasted(check.output, "reading:")
    written = perfbot("check", "--repo", root, "--revision", old, "--write-script", ".perfbot/build.sh")
    assert "wrote .perfbot/build.sh" in written.output and (repo.root / ".perfbot/build.sh").read_text() == script
    repo.repo.git.add(".perfbot.toml", ".perfbot/build.sh")
    repo.repo.git.commit("-q", "-m", "perfbot: a build script for every revision")
    for revision in (old, "main"):
        check = perfbot("check", "--repo", root, "--revision", revision)
        assert check.exit_code == 0, check.output
        assert re.search(r"perf_slow_add\s+yes\s+yes", check.output), check.output
    # At `old` the `sum N` program is newer than the runtime: a note, never a fix, and no failure of check's.
    assert re.search(r"perf_slow_sum\s+NO", check.output) is None
    check = perfbot("check", "--repo", root, "--revision", old)
    assert re.search(r"perf_slow_sum\s+NO", check.output) and "fix:" not in check.output, check.output
    assert "note: the runtime at this commit cannot read the report's program: the program is newer" in check.output


def test_a_reservation_larger_than_the_host_is_fixed_by_its_define_not_the_cap(tmp_path, perfbot):
    """The issue's runtime: a heap reservation larger than the host, its define renamed in its history."""
    repo, old = build_reserving(tmp_path / "big")
    config = repo.root / ".perfbot.toml"
    text = adopted(perfbot, repo.root)
    check = perfbot("check", "--repo", str(repo.root), "--config", str(config))
    assert check.exit_code == 1 and "cannot reserve 1099511627776 bytes" in check.output, check.output
    assert "asks for 1048576 MB at once, more than this host's" in check.output
    assert "raising [verify] memory_mb will not help" in check.output
    fix = pasted(check.output, "HEAP_BYTES sizes that reservation")
    assert fix == 'command = ["gcc", "-DHEAP_BYTES=1073741824", "-O2", "-o", "big", "big.c"]\n', check.output
    config.write_text(re.sub(r"^command = .*\n", fix, text, count=1, flags=re.M))
    check = perfbot("check", "--repo", str(repo.root), "--config", str(config))
    assert check.exit_code == 0 and re.search(r"perf_slow_add\s+yes\s+yes", check.output), check.output
    repo.repo.git.add(".perfbot.toml")
    repo.repo.git.commit("-q", "-m", "adopt perfbot")
    # At `old` the define was HEAP_CELLS: the build passes a name that checkout ignores, and the run fails.
    check = perfbot("check", "--repo", str(repo.root), "--revision", old)
    assert check.exit_code == 1 and "cannot reserve 1099511627776 bytes" in check.output, check.output
    script = pasted(check.output, "reading:")
    assert "then define=HEAP_BYTES; else define=HEAP_CELLS; fi" in script, script
    perfbot("check", "--repo", str(repo.root), "--revision", old, "--write-script", ".perfbot/build.sh")
    repo.repo.git.add(".perfbot.toml", ".perfbot/build.sh")
    repo.repo.git.commit("-q", "-m", "perfbot: a build script for every revision")
    for revision in (old, "main"):
        check = perfbot("check", "--repo", str(repo.root), "--revision", revision)
        assert check.exit_code == 0 and re.search(r"perf_slow_add\s+yes\s+yes", check.output), check.output


def test_the_runtime_the_issue_was_filed_from_is_adopted_for_every_revision_from_what_perfbot_printed(tmp_path,
                                                                                                        perfbot):
    """clang/ and a README line; -T glued to its count, newer than two commits; a 32 GiB heap whose define was
    renamed twice: init, the fix check printed, and the script check wrote, and every revision passes."""
    repo, first, second = build_as_the_issue_found_it(tmp_path / "hvm")
    root, config = str(repo.root), repo.root / ".perfbot.toml"
    text = adopted(perfbot, repo.root)
    assert 'command = ["sh", "-c", "cd clang && gcc -O2 -o hvm hvm.c"]' in text, text
    assert 'language = ["./clang/hvm", "-T{threads}", "{file}"]' in text, text  # -TN: one argument
    check = perfbot("check", "--repo", root, "--config", str(config))
    assert check.exit_code == 1 and "raising [verify] memory_mb will not help" in check.output, check.output
    fix = pasted(check.output, "HEAP_SIZE sizes that reservation")
    assert fix == 'command = ["sh", "-c", "cd clang && gcc -DHEAP_SIZE=1073741824 -O2 -o hvm hvm.c"]\n', fix
    config.write_text(re.sub(r"^command = .*\n", fix, text, count=1, flags=re.M))
    assert perfbot("check", "--repo", root, "--config", str(config)).exit_code == 0
    repo.repo.git.add(".perfbot.toml")
    repo.repo.git.commit("-q", "-m", "adopt perfbot")
    check = perfbot("check", "--repo", root, "--revision", first, "--write-script", ".perfbot/build.sh")
    assert check.exit_code == 1 and "Unknown option: -T1" in check.output, check.output
    assert "-T is in [run] language, and the runtime takes it only since" in check.output
    assert "(hvm: -TN, HEAP_SIZE)" in check.output and "wrote .perfbot/build.sh" in check.output
    repo.repo.git.add(".perfbot.toml", ".perfbot/build.sh")
    repo.repo.git.commit("-q", "-m", "perfbot: a build script for every revision")
    for revision in (first, second, "main"):  # `second` calls the define a name neither end of the range does
        check = perfbot("check", "--repo", root, "--revision", revision)
        assert check.exit_code == 0 and re.search(r"perf_slow_add\s+yes\s+yes", check.output), check.output


SMALL = """[build]
command = ["gcc", "-DTOUCH", "-DHEAP_BYTES=268435456", "-O2", "-o", "big", "big.c"]

[run]
language = ["./big", "{file}"]
program = "main.big"
fence = ["big"]

[verify]
memory_mb = 64
"""


def test_a_cap_that_is_too_small_is_raised_and_one_that_is_not_the_reason_is_left_alone(tmp_path, perfbot):
    """check runs a memory failure again with all of the host's memory: the cap to write when that runs; when it
    fails the same way, no cap hint at all but what to look at instead."""
    from tests.adopt_project import RESERVING
    from tests.gitrepo import RepoBuilder

    repo, _ = build_reserving(tmp_path / "big")
    config = tmp_path / "small.toml"
    config.write_text(SMALL)  # 256 MiB used under a 64 MB cap
    check = perfbot("check", "--repo", str(repo.root), "--config", str(config))
    assert check.exit_code == 1 and "fix: it runs with a cap of" in check.output, check.output
    assert "raise [verify] memory_mb" not in check.output  # the fix says by how much: no second, vaguer hint
    config.write_text(re.sub(r"^memory_mb = 64\n", pasted(check.output, "it runs with a cap of"), SMALL, flags=re.M))
    check = perfbot("check", "--repo", str(repo.root), "--config", str(config))
    assert check.exit_code == 0, check.output
    quiet = RepoBuilder(tmp_path / "quiet")  # reserves a terabyte and says only that memory ran out
    quiet.write("big.c", RESERVING.replace('"big: cannot reserve %llu bytes for the heap: %s\\n", '
                                           '(unsigned long long)HEAP_BYTES,\n            strerror(errno)',
                                           '"big: out of memory\\n"'))
    quiet.write("devs/issues/perf_slow_add.md", sum_report("big")).commit("big, quiet")
    assert "out of memory" in (quiet.root / "big.c").read_text()
    config.write_text(SMALL.replace('"-DTOUCH", "-DHEAP_BYTES=268435456", ', ""))
    check = perfbot("check", "--repo", str(quiet.root), "--config", str(config))
    assert check.exit_code == 1 and "big: out of memory" in check.output, check.output
    assert "MB, all of this host's memory, changed nothing: the cap is not the reason" in check.output
    assert "it runs with a cap" not in check.output and "raise [verify] memory_mb" not in check.output


def test_init_without_a_build_writes_todo_lines_and_check_says_nothing_was_built(tmp_path, perfbot):
    from tests.gitrepo import RepoBuilder

    repo = RepoBuilder(tmp_path / "bare")
    repo.write("notes.txt", "no build here\n").commit("nothing to build")
    init = perfbot("init", "--repo", str(repo.root))
    text = (repo.root / ".perfbot.toml").read_text()
    assert init.exit_code == 1 and "build: none found" in init.output, init.output
    assert "# TODO: no build found" in text and "# TODO: no runtime program found" in text
    check = perfbot("check", "--repo", str(repo.root), "--config", str(repo.root / ".perfbot.toml"))
    assert "nothing built (no [build] command or script" in check.output and "build at" in check.output
    assert ": yes" not in check.output.splitlines()[0], check.output
    (repo.root / ".perfbot.toml").unlink()  # nothing committed: check says so before anything else
    check = perfbot("check", "--repo", str(repo.root))
    assert check.output.splitlines()[1].startswith("no .perfbot.toml at ") and "perfbot init" in check.output
    assert "build at" in check.output and ": yes" not in check.output, check.output


def test_a_program_the_build_did_not_make_is_named_with_what_it_made(tmp_path, perfbot):
    repo = build_in_subfolder(tmp_path / "calc")
    config = tmp_path / "wrong.toml"
    config.write_text('[build]\ncommand = ["make", "-C", "runtime"]\n\n[run]\nlanguage = ["./bin/calc", "run", '
                      '"{file}"]\nfence = ["calc"]\n')
    check = perfbot("check", "--repo", str(repo.root), "--config", str(config))
    assert check.exit_code == 1 and "./bin/calc is not in the checkout after the build" in check.output, check.output
    assert "(it made: runtime/bin/calc)" in check.output
    config.write_text(config.read_text().replace('["make", "-C", "runtime"]', '["true"]'))
    check = perfbot("check", "--repo", str(repo.root), "--config", str(config))
    assert check.exit_code == 1 and "(the build changed nothing that runs: it made no program)" in check.output


def test_a_program_the_runtime_cannot_read_at_the_default_branch_is_a_failure_with_its_fix(tmp_path, perfbot):
    """Only at an older commit is a parse error the program being newer than the runtime; on the default branch
    it is the report's program or where it is written."""
    repo, _ = build_flags_across_commits(tmp_path / "stack")
    repo.write("devs/issues/perf_slow_mul.md", sum_report("stack", "mul 1000")).commit("a report stack cannot read")
    config = tmp_path / "stack.toml"
    config.write_text('[build]\ncommand = ["gcc", "-O2", "-o", "stack", "stack.c"]\n\n[run]\nlanguage = ["./stack", '
                      '"{file}"]\nprogram = "main.st"\nfence = ["stack"]\n')
    check = perfbot("check", "--repo", str(repo.root), "--config", str(config))
    assert check.exit_code == 1 and re.search(r"perf_slow_mul\s+NO", check.output), check.output
    assert "parse error: unexpected token `mul`" in check.output
    assert "fix: the runtime could not read the report's program: is it in this runtime's syntax" in check.output
    assert re.search(r"perf_slow_add\s+yes\s+yes", check.output) and "program is newer" not in check.output
