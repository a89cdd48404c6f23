"""The ssh runner: LocalRunner's behaviour on a bench host reached with OpenSSH, its host key always checked.

Every remote command is one string the remote user's shell parses, so each word is shlex-quoted and only
validated values form paths: the remote folder (repo_config.remote_path_ok, expanded on the host), 40-hex
shas and report slugs. Programs run under contain.py on the host, which contains them (bwrap where the host
has it; `sandbox = "none"` for a host without, such as a Mac), applies the limits and times them there, so
the ssh round trip is never part of a sample. One multiplexed connection (ControlMaster)
carries every command, so a timed run does not pay a handshake either. The remote folder is laid out as the
local runner's cache (worktrees/, built/, scripts/, runs/), and every file perfbot puts there goes through
contain.py's `put` and `fresh` on the host: never through a link, never into the checkout.
"""
from __future__ import annotations

import contextlib
import hashlib
import inspect
import json
import logging
import os
import re
import shlex
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import NoReturn

from bot.adapters.runners import contain
from bot.adapters.runners.base import SHA_RE, BuildError, RunResult, build_at, recipe, run_folder_name, script_folder
from bot.core.config import BuildScript, remote_path_ok
from bot.core.reports.records import SLUG_RE
from bot.errors import Invalid, NotAllowed, NotConfigured, TransientError, Unreachable, UserError

log = logging.getLogger(__name__)
HOST_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9.-]{0,252}")
USER_RE = re.compile(r"[a-z_][a-z0-9_-]{0,31}")
# One lock per remote user and host, whatever folder a runner uses: benchmarks on one machine take turns.
LOCK_PATH = "~/.cache/perfbot/host.lock"
MARGIN = 30  # seconds the local side waits past a remote timeout before it gives up on the host
_UNSAFE_LOCAL = re.compile(r"[\s\"'%\\]")  # ssh -o values split on blanks and expand % tokens
_NETWORK = ("Connection refused", "timed out", "Could not resolve", "unreachable", "No route to host",
            "Connection closed", "closed by remote host", "Connection reset", "Broken pipe",
            "kex_exchange_identification", "Temporary failure")


@dataclass(frozen=True)
class SshOptions:
    """The bot's side of every ssh connection: its key, the host keys it trusts, where master sockets live."""

    identity_file: Path
    known_hosts_file: Path
    control_dir: Path
    connect_timeout: int = 10
    persist_seconds: int = 120

    @classmethod
    def from_settings(cls, settings) -> SshOptions:
        ssh_dir = settings.instance_dir / "ssh"
        return cls(settings.ssh_key or ssh_dir / "id_ed25519", settings.ssh_known_hosts or ssh_dir / "known_hosts",
                   ssh_dir / "control")


class SshRunner:
    kind = "ssh"

    def __init__(self, name: str, host: str, *, options: SshOptions, repo_path: Path, user: str | None = None,
                 port: int = 22, path: str | None = None, build: tuple[str, ...] | None = None,
                 memory_mb: int = 4096, build_timeout: int = 900, build_script: BuildScript | None = None,
                 sandbox: str = "bwrap", readable: tuple[str, ...] = (), processes: int = 256,
                 output_mb: int = 16, secrets: tuple[str, ...] = (), cgroups: bool = True) -> None:
        """`cgroups` False makes the host use the fallback limits even where it could make a cgroup."""
        folder = path or f"~/.cache/perfbot/{name}"
        if not HOST_RE.fullmatch(host) or (user is not None and not USER_RE.fullmatch(user)):
            raise Invalid(f"not a valid host or user: {host[:60]!r} {str(user)[:40]!r}", at=f"runner {name}")
        if not remote_path_ok(folder):
            raise Invalid(f"{folder[:80]!r} is not an absolute or ~/ folder", at=f"runner {name}", key="path")
        self.name, self.host, self.user, self.port, self.folder = name, host, user, port, folder
        self.options = options
        self.repo_path = Path(repo_path)
        self.build = build
        self.build_script = build_script
        self.memory_mb = memory_mb
        self.build_timeout = build_timeout
        if sandbox not in ("bwrap", "none"):
            raise Invalid(f'sandbox must be "bwrap" or "none", not {sandbox[:40]!r}', at=f"runner {name}",
                          key="sandbox")
        self.sandbox, self.readable, self.processes, self.output_mb = sandbox, tuple(readable), processes, output_mb
        self.secrets, self.cgroups = secrets, cgroups
        self._made: set[PurePosixPath] = set()  # the run folders made for this runner: write_file's only places
        if sandbox == "none":
            log.warning("runner %s on %s runs reports' code UNCONTAINED (sandbox = \"none\"): limits and a clean "
                        "environment only; its results say so", name, host)
        self._root: PurePosixPath | None = None
        self._cores: int | None = None

    @property
    def where(self) -> str:
        return f"{self.user + '@' if self.user else ''}{self.host}:{self.port}"

    @contextmanager
    def exclusive(self) -> Iterator[None]:
        """One benchmark at a time on the host, across processes: a remote flock held by a live ssh session.
        Its run folders are thrown away before the lock is let go.

        If this process dies, its session closes, the holder reads EOF and exits, and the lock is free.
        """
        holder = subprocess.Popen([*self._ssh_argv(), self._python("lock", LOCK_PATH)], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        assert holder.stdin and holder.stdout and holder.stderr  # all three asked for as pipes
        try:
            for line in holder.stdout:  # waits here while another benchmark holds the host
                if line.strip() == b"locked":
                    break
            else:
                err = holder.communicate(timeout=MARGIN)[1]
                self._fail(holder.returncode, err, "cannot take the bench lock")
            try:
                yield
            finally:
                self._sweep()
        finally:
            holder.stdin.close()
            try:
                holder.wait(timeout=MARGIN)
            except subprocess.TimeoutExpired:
                holder.kill()
                holder.wait()
            holder.stdout.close()
            holder.stderr.close()

    def _sweep(self) -> None:
        """Every run folder of this runner (and its reference builds) thrown away; the next benchmark's are new
        anyway, so a host that cannot be reached now only keeps some garbage until the next sweep."""
        try:
            self._checked(self._python("sweep", str(self.root())), "cannot clear the run folders")
        except (UserError, TransientError) as exc:
            log.warning("runner %s: %s", self.name, exc)
        self._made.clear()

    def prepare(self, sha: str) -> PurePosixPath:
        """The commit unpacked with `git archive` into worktrees/<sha> on the host, built once, then reused."""
        if not SHA_RE.fullmatch(sha):
            raise Invalid(f"not a full commit sha: {sha[:60]!r}")
        workspace = self.root() / "worktrees" / sha
        mark = self.root() / "built" / sha
        wanted = recipe(self.build, self.build_script)
        code, out, _ = self._exec(_words("test", "-d", workspace) + " && " + _words("cat", mark), timeout=MARGIN)
        if code == 0 and out.decode(errors="replace").strip() == wanted:
            return workspace
        # Never built, half built, or built by another recipe: a fresh copy, not a build over the old one.
        self._checked(_words("rm", "-rf", mark, workspace), f"cannot clear {workspace}")
        self._transfer(sha, workspace)
        build_at(self, self.build, workspace, sha, self.build_timeout, f" on {self.host}", self._install_script(),
                 self.build_script.path if self.build_script else "{script}")
        self._checked(_words("mkdir", "-p", mark.parent), f"cannot create {mark.parent}")
        self._put(mark, wanted.encode())
        return workspace

    def _install_script(self) -> PurePosixPath | None:
        """`[build] script` sent to `<folder>/scripts/<digest>/` on the host, executable; the checkout lacks it."""
        if self.build_script is None:
            return None
        # Only the checked root, a hex digest and the name repo_config checked (plain characters) form the path.
        path = self.root() / script_folder(self.build_script) / self.build_script.name
        self._checked(_words("mkdir", "-p", path.parent), f"cannot create {path.parent}")
        self._put(path, self.build_script.content.encode("utf-8"), 0o755)
        return path

    def run_dir(self, workspace: PurePosixPath, slug: str) -> PurePosixPath:
        """A fresh folder on the host for one report's programs, outside the checkout (contain.fresh)."""
        if not SLUG_RE.fullmatch(slug):
            raise Invalid(f"not a report slug: {slug[:80]!r}")
        workspace = self._inside(workspace)
        if workspace.parent != self.root() / "worktrees" or not SHA_RE.fullmatch(workspace.name):
            raise NotAllowed(f"{workspace} is not a workspace of runner {self.name}", rule="a runner's own folders")
        runs = self.root() / "runs"
        request = json.dumps({"parent": str(runs), "prefix": run_folder_name(workspace.name, slug)})
        code, out, err = self._exec(self._python("fresh", request), timeout=MARGIN)
        made = PurePosixPath(out.decode(errors="replace").rstrip().rsplit("\n", 1)[-1])
        if code != 0 or made.parent != runs or not made.name.startswith(run_folder_name(workspace.name, slug)):
            self._fail(code, err, f"cannot create a run folder in {runs}")
        self._made.add(made)
        return made

    def write_file(self, path: PurePosixPath, text: str) -> None:
        """A file straight in a run folder this runner made, written on the host without following a link."""
        path = self._inside(path)
        if path.parent not in self._made or path.name.startswith("."):
            raise NotAllowed(f"{str(path)[:120]} is not in a run folder runner {self.name} made",
                             rule="a runner's own folders")
        self._put(path, text.encode("utf-8"))

    def _put(self, path: PurePosixPath, data: bytes, mode: int = 0o644) -> None:
        self._checked(self._python("put", json.dumps({"path": str(path), "mode": mode})), f"cannot write {path}",
                      data=data)

    def run(self, argv: list[str], cwd: PurePosixPath, timeout: float) -> RunResult:
        cwd = self._inside(cwd)
        if cwd.parent.name == "runs" and SHA_RE.fullmatch(cwd.name[:40]):  # a run folder (a reference's too)
            workspace = cwd.parent.parent / "worktrees" / cwd.name[:40]
        else:
            workspace = next((f for f in (cwd, *cwd.parents) if f.parent.name == "worktrees"), cwd)
        request = {"argv": [str(a) for a in argv], "cwd": str(cwd), "timeout": timeout, "memory_mb": self.memory_mb,
                   "processes": self.processes, "output_bytes": self.output_mb << 20, "sandbox": self.sandbox,
                   "workspace": str(workspace), "scripts": str(self.root() / "scripts"),
                   "readable": list(self.readable), "private": [str(self.root())], "cgroups": self.cgroups}
        code, out, err = self._exec(self._python("run", json.dumps(request)), timeout=timeout + MARGIN)
        try:
            data = json.loads(out.rstrip().rsplit(b"\n", 1)[-1])
            if not isinstance(data, dict):
                raise ValueError
        except (ValueError, IndexError):
            self._fail(code, err, f"the run wrapper failed (exit {code})")
        try:
            return RunResult.from_answer(data, f"{self.name} on {self.host}", self.secrets)
        except (KeyError, TypeError, ValueError):
            self._fail(code, err, f"the run wrapper answered something else (exit {code})")

    def cores(self) -> int | None:
        """The host's online CPUs, asked once over the shared connection (one getconf, no program run)."""
        if self._cores is None:
            code, out, _ = self._exec(_words("getconf", "_NPROCESSORS_ONLN"), timeout=MARGIN)
            text = out.decode(errors="replace").strip()
            self._cores = int(text) if code == 0 and text.isdigit() and int(text) > 0 else 0
        return self._cores or None

    def for_project(self, repo_path: Path, build: tuple[str, ...] | None) -> SshRunner:
        """Another repository's or build's commits in a folder of their own inside this runner's remote folder."""
        key = hashlib.sha256(f"{Path(repo_path).resolve()}\0{build}".encode()).hexdigest()[:16]
        return SshRunner(self.name, self.host, options=self.options, repo_path=repo_path, user=self.user,
                         port=self.port, path=f"{self.folder.rstrip('/')}/projects/{key}", build=build,
                         memory_mb=self.memory_mb, build_timeout=self.build_timeout, sandbox=self.sandbox,
                         readable=self.readable, processes=self.processes, output_mb=self.output_mb,
                         secrets=self.secrets, cgroups=self.cgroups)

    def root(self) -> PurePosixPath:
        """The remote folder, expanded by the host itself (~ is the remote user's home), asked once."""
        if self._root is None:
            code, out, err = self._exec(self._python("root", self.folder), timeout=MARGIN)
            full = out.decode(errors="replace").rstrip().rsplit("\n", 1)[-1]
            if code != 0 or not full.startswith("/") or not remote_path_ok(full):
                self._fail(code, err, f"cannot use the folder {self.folder} (it became {full[:80]!r})")
            self._root = PurePosixPath(full)
        return self._root

    def close(self) -> None:
        """Stop the shared connection now rather than after ControlPersist."""
        # Nothing to stop, or it stops itself after ControlPersist.
        with contextlib.suppress(UserError, OSError, subprocess.TimeoutExpired):
            subprocess.run(self._ssh_argv(["-O", "exit"]), capture_output=True, timeout=MARGIN)

    def _transfer(self, sha: str, workspace: PurePosixPath) -> None:
        repo = str(self.repo_path)
        if subprocess.run(["git", "-C", repo, "cat-file", "-e", f"{sha}^{{commit}}"], capture_output=True).returncode:
            raise BuildError(f"cannot check out {sha[:12]}: no such commit in {repo}")
        archive = subprocess.Popen(["git", "-C", repo, "archive", "--format=tar", sha], stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE)
        assert archive.stdout and archive.stderr  # both asked for as pipes
        try:
            code, _, err = self._exec(_words("mkdir", "-p", workspace) + " && " + _words("tar", "-x", "-f", "-",
                                      "-C", workspace), stdin=archive.stdout, timeout=self.build_timeout)
        finally:
            archive.stdout.close()  # so git sees a broken pipe rather than blocking if ssh went away
            archive_err = archive.stderr.read().decode(errors="replace")
            archive.wait()
            archive.stderr.close()
        if archive.returncode != 0:
            raise BuildError(f"cannot check out {sha[:12]}: git archive: {archive_err.strip()[:300]}")
        if code != 0:
            raise BuildError(f"cannot unpack {sha[:12]} on {self.host}: {err.decode(errors='replace').strip()[-300:]}")

    def _inside(self, path: PurePosixPath) -> PurePosixPath:
        path, root = PurePosixPath(path), self.root()
        if ".." in path.parts or not path.is_absolute() or (path != root and root not in path.parents):
            raise NotAllowed(f"{str(path)[:120]} is outside the folder of runner {self.name}",
                             rule="a runner's own folders")
        return path

    def _python(self, command: str, arg: str) -> str:
        return _words("python3", "-c", _wrapper_source(), command, arg)

    def _checked(self, remote: str, what: str, data: bytes | None = None) -> None:
        code, _, err = self._exec(remote, data=data, timeout=MARGIN)
        if code != 0:
            raise Unreachable(f"{what}: {err.decode(errors='replace').strip()[-300:]}", host=self.host)

    def _exec(self, remote: str, *, timeout: float, data: bytes | None = None,
              stdin=subprocess.DEVNULL) -> tuple[int, bytes, bytes]:
        process = subprocess.Popen([*self._ssh_argv(), remote], stdin=subprocess.PIPE if data is not None else stdin,
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        try:
            out, err = process.communicate(data, timeout=timeout)
        except subprocess.TimeoutExpired:
            process.kill()  # the host hangs: stop waiting; the remote side ends with its own timeout
            process.communicate()
            raise TransientError(f"{self.where} did not answer within {timeout:.0f}s; the ssh client was stopped",
                                 retry_after=60) from None
        if process.returncode == 255:  # ssh's own failure: the connection, not the command
            self._fail(255, err, "ssh failed")
        return process.returncode, out, err

    def _fail(self, code: int | None, err: bytes, what: str) -> NoReturn:
        """Raise the clearest error for a failed ssh command: the fix for a host key, a retry for the network."""
        text = err.decode(errors="replace")
        known, key = self.options.known_hosts_file, self.options.identity_file
        name = self.host if self.port == 22 else f"[{self.host}]:{self.port}"
        add = (f"add the host key of {self.host} to {known} (ssh-keyscan -p {self.port} {self.host} >> {known}) "
               "after checking its fingerprint")
        if "IDENTIFICATION HAS CHANGED" in text or ("host key for" in text.lower() and "changed" in text):
            raise Unreachable(f"its host key does not match {known}", f"if the host was reinstalled, remove the old "
                              f"key (ssh-keygen -R '{name}' -f {known}) and {add}", host=self.where)
        if "Host key verification failed" in text or "host key is known" in text:
            raise Unreachable(f"its host key is not in {known}", add, host=self.where)
        if "Permission denied" in text:
            raise Unreachable(f"refused the key {key}", f"add {key}.pub to ~/.ssh/authorized_keys of "
                              f"{self.user or 'the bench user'} on {self.host}", host=self.where)
        if code == 127 and "python3" in text:
            raise Unreachable(f"no python3 on the PATH of {self.user or 'its bench user'}", "install it",
                              host=self.host)
        last = text.strip().splitlines()[-1][:300] if text.strip() else f"exit {code}"
        if code == 255 and any(sign in text for sign in _NETWORK):
            raise TransientError(f"cannot reach {self.where} over ssh: {last}", retry_after=60)
        raise Unreachable(f"{what}: {last}", host=self.where)

    def _ssh_argv(self, extra: list[str] | None = None) -> list[str]:
        opts = self.options
        for setting, path in (("PERFBOT_SSH_KEY", opts.identity_file), ("PERFBOT_SSH_KNOWN_HOSTS",
                              opts.known_hosts_file), ("the ssh control folder", opts.control_dir)):
            if _UNSAFE_LOCAL.search(str(path)):
                raise NotConfigured(f"{setting}: {path} has blanks, quotes or %, which ssh options cannot carry",
                                    "the operator names a path without them", owner="operator")
        if not opts.known_hosts_file.is_file():
            raise NotConfigured(f"no known_hosts file at {opts.known_hosts_file} (PERFBOT_SSH_KNOWN_HOSTS)",
                                f"create it and add the host key of {self.host} (ssh-keyscan -p {self.port} "
                                f"{self.host} >> {opts.known_hosts_file}) after checking its fingerprint",
                                key="PERFBOT_SSH_KNOWN_HOSTS", owner="operator")
        if not opts.identity_file.is_file():
            raise NotConfigured(f"no ssh key at {opts.identity_file} (PERFBOT_SSH_KEY)",
                                f"create one (ssh-keygen -t ed25519 -N '' -f {opts.identity_file}) and authorize its "
                                f".pub on {self.host}", key="PERFBOT_SSH_KEY", owner="operator")
        # A master already past host key checking is only shared by runners with the same trust and key.
        socket = _control_socket(opts.control_dir, f"{self.where} {opts.known_hosts_file} {opts.identity_file}")
        argv = ["ssh", "-F", "none", "-T", "-o", "BatchMode=yes", "-o", "StrictHostKeyChecking=yes",
                "-o", f"UserKnownHostsFile={opts.known_hosts_file}", "-o", "GlobalKnownHostsFile=/dev/null",
                "-o", "UpdateHostKeys=no", "-i", str(opts.identity_file), "-o", "IdentitiesOnly=yes",
                "-o", f"ConnectTimeout={opts.connect_timeout}", "-o", "ServerAliveInterval=15",
                "-o", "ServerAliveCountMax=3", "-o", "ControlMaster=auto", "-o", f"ControlPath={socket}",
                "-o", f"ControlPersist={opts.persist_seconds}", "-p", str(self.port)]
        return argv + (extra or []) + (["-l", self.user] if self.user else []) + [self.host]


def _words(*words) -> str:
    return " ".join(shlex.quote(str(w)) for w in words)


def _wrapper_source() -> str:
    return inspect.getsource(contain)


def _control_socket(folder: Path, identity: str) -> Path:
    """A private folder for master sockets; the name is short so it fits a unix socket path everywhere."""
    folder.mkdir(parents=True, exist_ok=True)
    os.chmod(folder, 0o700)
    if folder.stat().st_uid != os.getuid():
        raise NotAllowed(f"ssh control folder {folder} belongs to someone else",
                         "give perfbot an instance folder of its own", rule="a private control folder")
    socket = folder / hashlib.sha256(identity.encode()).hexdigest()[:16]
    if len(str(socket)) > 86:  # ssh binds <path>.<16 random chars>; sun_path holds 104 bytes on macOS
        raise NotConfigured(f"ssh control folder {folder} is too long for a unix socket path",
                            "use a shorter instance dir", owner="operator")
    return socket
