"""`perfbot` as a real process in tests: its own environment and log, started, killed or stopped as a host would."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

PERFBOT = Path(sys.executable).with_name("perfbot")
# What each long-running command logs once it is up (bot/cli/service_cmd.py).
STARTED = ("perfbot worker running", "perfbot serving on")


class PerfbotProcess:
    """One `perfbot ARGS...` process writing stdout and stderr to `log`."""

    def __init__(self, env: Mapping[str, str], log: Path, *args: str) -> None:
        self.env, self.log, self.args = dict(env), log, args
        self.process: subprocess.Popen | None = None

    def start(self) -> PerfbotProcess:
        with open(self.log, "ab") as out:
            self.process = subprocess.Popen([str(PERFBOT), *self.args], env=self.env, stdout=out, stderr=out)
        return self

    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def running(self) -> bool:
        """True once it said it is up; an exit before or since fails the test with the log's end."""
        if not self.alive():
            code = self.process.returncode if self.process else None
            raise AssertionError(f"perfbot {' '.join(self.args)} exited with {code}:\n{self.text()[-3000:]}")
        return any(line in self.text() for line in STARTED)

    def kill(self) -> None:
        """SIGKILL: a crash, nothing cleaned up."""
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(timeout=10)

    def stop(self) -> int | None:
        """SIGTERM, as a deployment stops it; SIGKILL if it has not gone in 30 s."""
        if not self.alive():
            return self.process.returncode if self.process else None
        self.process.send_signal(signal.SIGTERM)
        try:
            return self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            return self.process.wait()

    def text(self) -> str:
        return self.log.read_text(errors="replace") if self.log.exists() else ""

    def cpu_seconds(self) -> float:
        """CPU time of the process and of its children it waited for (git, gcc, the measured programs)."""
        fields = Path(f"/proc/{self.process.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return sum(int(v) for v in fields[11:15]) / os.sysconf("SC_CLK_TCK")
