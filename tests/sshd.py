"""A real, throwaway OpenSSH server on 127.0.0.1 for the ssh runner tests: its own host key, config and client key."""
from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

from tests.servers import free_port

SSHD = "/usr/sbin/sshd"  # sshd re-executes itself, so it must be started by its absolute path


def keygen(path: Path) -> None:
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "perfbot-test", "-f", str(path)],
                   check=True, capture_output=True, timeout=60)


class SshServer:
    """sshd -D -e on a free loopback port; `client_key` logs in as the current user, `known_hosts` trusts it.

    The folder lives under /tmp with a short name: ssh's master sockets must fit a unix socket path.
    """

    def __init__(self) -> None:
        if not os.path.exists(SSHD):
            raise RuntimeError(f"{SSHD} not found: run ./test.sh, which installs openssh-server, or install it")
        self.root = Path(tempfile.mkdtemp(prefix="pbssh-", dir="/tmp"))
        self.port = free_port()
        self.host_key = self.root / "host_ed25519"
        self.client_key = self.root / "client_ed25519"
        self.known_hosts = self.root / "known_hosts"
        self.control_dir = self.root / "ctl"
        self.log = self.root / "sshd.log"
        # The remote user's home: a clean folder, as a bench user's is, so that a login shell reads no profile of
        # this machine's (root's ~/.bashrc runs `pyenv init` here: 100 ms at every command, the suite's minutes).
        self.home = self.root / "home"
        self.process: subprocess.Popen | None = None

    def start(self) -> SshServer:
        keygen(self.host_key)
        keygen(self.client_key)
        (self.root / "authorized_keys").write_text((self.root / "client_ed25519.pub").read_text())
        if os.geteuid() == 0:
            os.makedirs("/run/sshd", mode=0o755, exist_ok=True)  # privilege separation needs it to exist
        for attempt in range(3):  # a parallel worker may take the free port first: then another one
            try:
                return self._serve()
            except RuntimeError:
                if attempt == 2 or self.process.poll() is None:
                    raise
                self.port = free_port()
        return self

    def _serve(self) -> SshServer:
        config = self.root / "sshd_config"
        self.home.mkdir(exist_ok=True)
        config.write_text(f"""Port {self.port}
ListenAddress 127.0.0.1
HostKey {self.host_key}
AuthorizedKeysFile {self.root}/authorized_keys
PidFile {self.root}/sshd.pid
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
PermitRootLogin prohibit-password
MaxSessions 30
MaxStartups 30:30:60
LogLevel INFO
SetEnv HOME={self.home}
""")
        with open(self.log, "wb") as log:
            # Its own session, so teardown reaches every per-connection child too.
            self.process = subprocess.Popen([SSHD, "-D", "-e", "-f", str(config)], stdout=log, stderr=log,
                                            start_new_session=True)
        host_key = (self.root / "host_ed25519.pub").read_text().split()[:2]
        self.known_hosts.write_text(f"[127.0.0.1]:{self.port} {' '.join(host_key)}\n")
        self._wait()
        return self

    def _wait(self) -> None:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"sshd exited {self.process.returncode}: {self.log.read_text()[-800:]}")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=2) as sock:
                    if sock.recv(64).startswith(b"SSH-2.0-"):
                        return
            except OSError:
                time.sleep(0.05)
        raise RuntimeError(f"sshd did not accept connections within 30s: {self.log.read_text()[-800:]}")

    def stop(self) -> None:
        try:
            if self.process is not None and self.process.poll() is None:
                os.killpg(self.process.pid, signal.SIGTERM)
                try:
                    self.process.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    os.killpg(self.process.pid, signal.SIGKILL)
                    self.process.wait()
        finally:
            shutil.rmtree(self.root, ignore_errors=True)


@pytest.fixture(scope="session")
def sshd():
    server = SshServer().start()
    yield server
    server.stop()
