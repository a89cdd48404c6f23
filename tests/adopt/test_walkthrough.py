"""docs/adopt.md, run as a newcomer runs it: every `$` line of the page, in order, in a shell's way (`cd` moves,
`&&` stops at the first failure), with `perfbot` on PATH. Each output line the page shows must be what the
command printed (times aside; `...` marks what the page leaves out)."""
from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

PAGE = Path(__file__).resolve().parents[2] / "docs" / "adopt.md"
VERDICT = re.compile(r"^(?:fixed|reproduced|not reproduced|not fixed|no effect|faster but not fixed|inconclusive)\b",
                     re.M)


def steps(page: str) -> list[tuple[str, int, list[str]]]:
    """(command, the exit status the page gives it, the output lines it shows) for every `$` line."""
    found: list[tuple[str, int, list[str]]] = []
    for line in page.splitlines():
        if line.startswith("    $ "):
            command, _, comment = line[6:].partition("#")
            status = 1 if re.search(r"\bexit 1\b", comment) else 0
            found.append((command.strip(), status, []))
        elif found and line.startswith("    ") and line.strip():
            found[-1][2].append(line[4:])
        elif found and not line.startswith("    "):
            found.append(("", 0, []))  # prose: the next indented lines are no command's output
    return [step for step in found if step[0]]


def _times(text: str) -> str:
    return re.sub(r"\b[0-9]+\.[0-9]+s\b", "N.NNs", text)


def shown_in(shown: list[str], output: str) -> list[str]:
    """The page's output lines the command did not print."""
    printed = [_times(line) for line in output.splitlines()]
    missing = []
    for line in shown:
        line = _times(line)
        if line.strip() == "...":
            continue
        if line.endswith("..."):
            if not any(p.startswith(line[:-3].rstrip()) for p in printed):
                missing.append(line)
        elif line not in printed:
            missing.append(line)
    return missing


def test_every_command_of_the_adopt_page_runs_as_written(tmp_path):
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
           "PERFBOT_INSTANCE_DIR": str(tmp_path / "instance"), "GIT_AUTHOR_NAME": "a", "GIT_AUTHOR_EMAIL": "a@x",
           "GIT_COMMITTER_NAME": "a", "GIT_COMMITTER_EMAIL": "a@x"}
    cwd = tmp_path
    commands = steps(PAGE.read_text(encoding="utf-8"))
    assert [c for c, _, _ in commands][:3] == ["perfbot demo --runtime tally", "cd tally", "perfbot init"]
    assert any("--write-script" in c for c, _, _ in commands) and any(c.startswith("perfbot verify") for c, _, _
                                                                      in commands)
    for command, status, shown in commands:
        output, code = "", 0
        for part in command.split("&&"):
            argv = shlex.split(part)
            if argv[0] == "cd":
                cwd = cwd / argv[1]
                continue
            ran = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=600)
            output, code = output + ran.stdout, ran.returncode
            if code:
                break
        if command.startswith("perfbot verify"):  # a verdict in wall time: the page shows that one is reached
            assert VERDICT.search(output), (command, output, ran.stderr)
            continue
        assert code == status, (command, code, output, ran.stderr)
        assert shown_in(shown, output) == [], (command, output)
    assert (cwd / ".perfbot" / "build.sh").stat().st_mode & 0o111
    assert 'script = ".perfbot/build.sh"' in (cwd / ".perfbot.toml").read_text()


def test_the_page_is_read_as_a_shell_reads_it():
    page = "    $ a && b   # exit 1: why\n    shown\n\nprose\n    not shown\n    $ c\n"
    assert steps(page) == [("a && b", 1, ["shown"]), ("c", 0, [])]
    assert shown_in(["x 0.07s", "fix: a ...", "..."], "x 1.50s\nfix: a b c\n") == []
    assert shown_in(["missing"], "x\n") == ["missing"]
