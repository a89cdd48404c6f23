"""`[sandbox]` of `.perfbot.toml`: what a report's code may see beyond the system folders, and its tree's limits.

    [sandbox]
    readable = ["/opt/datasets"]   # folders on the bench host shown read-only inside (absolute, plain names)
    processes = 256                # processes and threads of one run's whole tree (a fork bomb stays inside)
    output_mb = 16                 # kept of each stream; the rest is dropped and the run says so

Memory stays `[verify] memory_mb`, for the whole tree. A runner's `sandbox = "none"` opts a dedicated bench host
out of bubblewrap (never the default); the limits and the clean environment still apply.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from bot.core.config_checks import ConfigFileError, check as _check, table_values

SANDBOX_KEYS = {"readable": "folders", "processes": "count", "output_mb": "count"}
_FOLDER = re.compile(r"/[A-Za-z0-9_.-]+(?:/[A-Za-z0-9_.-]+){0,30}")
# Never shown, whatever the file says: the host's secrets, sockets and kernel interfaces live there.
_NEVER = ("/etc", "/root", "/home", "/run", "/var/run", "/var/lib", "/proc", "/sys", "/dev", "/boot", "/tmp")


@dataclass(frozen=True)
class SandboxSettings:
    readable: tuple[str, ...] = ()
    processes: int = 256
    output_mb: int = 16


def parse_sandbox(table, lines: list[str]) -> SandboxSettings:
    values = table_values("sandbox", table, lines, SANDBOX_KEYS, _value)
    return SandboxSettings() if values is None else SandboxSettings(**values)


def _value(key: str, value, kind: str, line: int):
    if kind != "folders":
        return _check(key, value, kind, line)
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigFileError(key, line, 'must list absolute folders, e.g. ["/opt/datasets"]')
    for folder in value:
        if not _FOLDER.fullmatch(folder) or {".", ".."} & set(folder.split("/")):
            raise ConfigFileError(key, line, f"{folder[:60]!r} must be an absolute folder of letters, digits and "
                                  "_.- without '..'")
        if any(folder == never or folder.startswith(never + "/") for never in _NEVER):
            raise ConfigFileError(key, line, f"{folder[:60]!r} is never shown to a report's code: "
                                  f"{', '.join(_NEVER)} hold the host's secrets and sockets")
    return tuple(value)
