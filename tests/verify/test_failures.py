"""core/verify/failures.py: each failure's hint follows its evidence, the same in check, verify and bench comments."""
from __future__ import annotations

import pytest

from bot.adapters.runners.base import RunResult
from bot.core.verify.failures import Evidence, Kind, classify, option_base, reserved_mb


def failed(stderr: str = "", returncode: int = 1, **kwargs) -> Evidence:
    return Evidence(returncode, "", stderr, **kwargs)


def kind_of(evidence: Evidence) -> Kind:
    return classify(evidence, "the program", "at abc", 60, 4096).kind


def test_a_reservation_larger_than_the_host_says_the_cap_will_not_help():
    evidence = failed("rt: mmap of 34359738368 bytes for the heap failed: Cannot allocate memory",
                      host_memory_mb=24105)
    failure = classify(evidence, "the program", "at abc", 60, 40000)
    assert failure.kind is Kind.RESERVATION and failure.reserved_mb == 32768
    assert "more than this host's 24105 MB: raising [verify] memory_mb will not help" in str(failure)
    assert "raise [verify] memory_mb if" not in str(failure)


def test_an_address_space_refusal_under_the_cap_gets_the_memory_hint_with_the_size_asked():
    failure = classify(failed("calloc(8 GiB) failed", host_memory_mb=65536), "the program", "at abc", 60, 4096)
    assert failure.kind is Kind.ADDRESS_SPACE and "asks for 8192 MB at once, past the memory cap of 4096 MB" \
        in failure.hint and "raise [verify] memory_mb above 8192" in failure.hint
    plain = classify(failed("mmap failed: ENOMEM"), "it", "at abc", 60, 512)
    assert plain.kind is Kind.ADDRESS_SPACE and "may have hit the memory cap of 512 MB" in plain.hint
    assert "if a larger cap fails the same way, look at what the runtime reserves" in plain.hint


def test_a_refusal_under_a_cap_past_the_hosts_memory_does_not_repeat_raise_the_cap():
    """Issue 40: at 40000 MB on a 24 GiB host the runtime failed as at 4096 MB, and perfbot said 'raise
    [verify] memory_mb' again. With no size in the output, the cap against the host is the evidence."""
    refused = failed("rt: mmap failed: Cannot allocate memory", host_memory_mb=24105)
    raised = classify(refused, "the program", "at abc", 60, 40000)
    assert raised.kind is Kind.ADDRESS_SPACE and "raise [verify] memory_mb if" not in raised.hint
    assert "cap of 40000 MB is already at or past this host's 24105 MB: raising [verify] memory_mb will not help" \
        in raised.hint and "what the runtime reserves" in raised.hint
    below = classify(refused, "the program", "at abc", 60, 4096)  # a larger cap may still help here
    assert "raise [verify] memory_mb if the program needs more" in below.hint


def test_a_refused_fork_names_the_process_limit_even_when_the_run_then_timed_out():
    bomb = failed("sh: 1: Cannot fork\n" * 3, returncode=-9, timed_out=True, limit="time")
    failure = classify(bomb, "the program", "at abc", 30, 512)
    assert failure.kind is Kind.PROCESSES and "process limit" in str(failure) and "[sandbox] processes" in str(failure)
    assert "30s limit" not in str(failure)
    assert kind_of(failed("", returncode=-9, timed_out=True, limit="time")) is Kind.TIMEOUT
    assert kind_of(failed("fork: Resource temporarily unavailable")) is Kind.PROCESSES
    assert kind_of(failed("", limit="processes")) is Kind.PROCESSES


@pytest.mark.parametrize("said, flag", [
    ("Unknown option: -T1", "-T1"), ("rt: unrecognized option '--threads'", "--threads"),
    ("error: unexpected argument '--jobs' found", "--jobs"), ("rt: invalid option -- 'x'", "-x"),
])
def test_an_unknown_option_is_named(said, flag):
    failure = classify(failed(said, returncode=2), "the program", "at abc", 60, 4096)
    assert failure.kind is Kind.UNKNOWN_OPTION and failure.flag == flag and flag in failure.hint


def test_parse_errors_missing_programs_and_the_rest():
    assert kind_of(failed("rt: parse error at line 3: unexpected token `sum`")) is Kind.PARSE_ERROR
    assert kind_of(failed("SyntaxError: invalid syntax")) is Kind.PARSE_ERROR
    assert kind_of(failed("assertion: expected 5 but got 6")) is Kind.EXITED  # the program's words, not a reader's
    assert kind_of(failed("cannot run /w/bin/rt: [Errno 2] No such file or directory", returncode=127)) \
        is Kind.MISSING_PROGRAM
    other = classify(failed("segfault"), "it", "at abc", 60, 64)
    assert other.kind is Kind.EXITED and "memory" not in str(other) and str(other) == "it at abc exited 1:\nsegfault"


def test_sizes_are_read_from_allocation_lines_only():
    assert reserved_mb("heap: cannot reserve 32 GiB\nsteps: 123456789") == 32768
    assert reserved_mb("mmap(1073741824) failed") == 1024
    assert reserved_mb("steps: 99999999999\n") is None
    assert option_base("-T1") == "-T" and option_base("--threads=4") == "--threads" and option_base("-x") == "-x"


def test_a_run_result_classifies_with_its_hosts_memory():
    """RunResult.failure is the text verify and bench comments show: the classifier's, with the host's memory
    the runner reported."""
    result = RunResult(1, "", "rt: cannot reserve 1099511627776 bytes for the heap: Cannot allocate memory", 0.1,
                       memory_total_mb=24105)
    assert "raising [verify] memory_mb will not help" in result.failure("the program", "at abc", 60, 4096)
    assert result.classified("the program", "at abc", 60, 4096).kind is Kind.RESERVATION


BOMB = """import os, sys, time
while True:
    try:
        if os.fork() == 0:
            time.sleep(30)
            os._exit(0)
    except OSError as exc:
        print("fork:", exc, file=sys.stderr, flush=True)
        time.sleep(0.2)
"""


def test_a_fork_bomb_that_runs_to_the_timeout_is_named_by_the_process_limit():
    """Contained for real, with the fallback limits (no cgroup counts the refusals): the bomb keeps trying until
    the timeout ends it, and the failure names the process limit it kept hitting, not the timeout."""
    import shutil
    import tempfile
    from pathlib import Path

    from bot.adapters.runners.local import LocalRunner

    base = Path(tempfile.mkdtemp(prefix="perfbot-bomb-", dir="/var/tmp")).resolve()
    base.chmod(0o755)
    runner = LocalRunner("local", base, base / "bench", build=None, memory_mb=512, processes=6, cgroups=False)
    try:
        result = runner.run(["python3", "-c", BOMB], base, 2)
    finally:
        shutil.rmtree(base, ignore_errors=True)
    assert not result.ok and "Resource temporarily unavailable" in result.stderr, result
    said = result.failure("the program", "at abc", 2, 512)
    assert "hit the process limit" in said and "[sandbox] processes" in said and "2s limit" not in said


def test_perfbot_verify_gives_a_reservation_past_the_host_the_hint_that_follows_it(tmp_path, monkeypatch):
    """Item 5 through `perfbot verify` (the service's runs share verify and RunResult.failure): the runtime that
    reserves a terabyte at start is told the cap will not help, and which define sizes the reservation is check's."""
    from click.testing import CliRunner

    from bot.cli import main
    from tests.adopt_project import build_reserving

    monkeypatch.setenv("PERFBOT_INSTANCE_DIR", str(tmp_path / "instance"))
    perfbot = CliRunner()
    repo, _old = build_reserving(tmp_path / "big")
    assert perfbot.invoke(main, ["init", "--repo", str(repo.root)], catch_exceptions=False).exit_code == 0
    said = perfbot.invoke(main, ["verify", "perf_slow_add", "--repo", str(repo.root), "--head", "main", "--config",
                                 str(repo.root / ".perfbot.toml"), "--db", f"sqlite:///{tmp_path / 'v.sqlite3'}"],
                          catch_exceptions=False)
    assert said.exit_code == 1 and "cannot reserve 1099511627776 bytes" in said.output, said.output
    assert "asks for 1048576 MB at once, more than this host's" in said.output
    assert "raising [verify] memory_mb will not help" in said.output
    assert "raise [verify] memory_mb if" not in said.output
