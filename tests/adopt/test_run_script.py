"""./run.sh CMD runs `perfbot CMD` where it was called from (a team's own repository), not in perfbot's checkout;
with no arguments it serves the demo from perfbot's checkout. Run on a copy whose bootstrap and perfbot are
stand-ins that say where they ran."""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

PROJECT = Path(__file__).resolve().parents[2]


def copy_with_stand_ins(root: Path) -> Path:
    checkout = root / "perfbot"
    (checkout / "scripts").mkdir(parents=True)
    (checkout / ".venv" / "bin").mkdir(parents=True)
    shutil.copy(PROJECT / "run.sh", checkout / "run.sh")
    stand_ins = {"scripts/bootstrap": 'echo "bootstrap in $PWD" >&2\n',
                 ".venv/bin/perfbot": 'echo "perfbot $* in $PWD"\n'}
    for name, body in stand_ins.items():
        (checkout / name).write_text("#!/bin/sh\n" + body)
        (checkout / name).chmod(0o755)
    (checkout / "instance" / "demo" / ".git").mkdir(parents=True)  # the demo exists: no `perfbot demo` first
    return checkout


def test_a_command_runs_in_the_callers_directory_and_the_service_in_perfbots(tmp_path):
    checkout = copy_with_stand_ins(tmp_path)
    mine = tmp_path / "my-runtime"
    mine.mkdir()
    ran = subprocess.run([str(checkout / "run.sh"), "lint", "devs/issues/"], cwd=mine, capture_output=True,
                         text=True, timeout=60)
    assert ran.returncode == 0 and ran.stdout == f"perfbot lint devs/issues/ in {mine}\n", ran
    served = subprocess.run(["../perfbot/run.sh"], cwd=mine, capture_output=True, text=True, timeout=60)
    assert served.stdout == f"perfbot serve --repo instance/demo in {checkout}\n", served
