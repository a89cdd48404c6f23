"""Service settings from PERFBOT_* environment variables, read when asked for, never at import time."""
from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_BIND = "127.0.0.1:8000"
DEFAULT_API_URL = "https://api.github.com"
# GitHub caps webhook payloads at 25 MB; anything larger did not come from GitHub.
DEFAULT_MAX_BODY = 25 * 1024 * 1024


class ConfigError(Exception):
    """A setting is missing or malformed; the message names the variable and the fix."""


def read_setting(environ: Mapping[str, str], name: str) -> str | None:
    """`PERFBOT_<NAME>`, or the contents of the file `PERFBOT_<NAME>_FILE` names (for secrets)."""
    value = environ.get(f"PERFBOT_{name}")
    file_name = environ.get(f"PERFBOT_{name}_FILE")
    if value is not None and file_name is not None:
        raise ConfigError(f"both PERFBOT_{name} and PERFBOT_{name}_FILE are set; keep one")
    if file_name is not None:
        try:
            return Path(file_name).read_text(encoding="utf-8").strip()
        except OSError as exc:
            raise ConfigError(f"PERFBOT_{name}_FILE={file_name}: cannot read it ({exc.strerror})") from None
    return value


_NUMBERED_SECRET = re.compile(r"PERFBOT_WEBHOOK_SECRET_([1-9][0-9]?)(?:_FILE)?")


def webhook_secrets(environ: Mapping[str, str]) -> tuple[str, ...]:
    """Every secret a delivery may be signed with (rotation): PERFBOT_WEBHOOK_SECRET, then PERFBOT_WEBHOOK_SECRET_2,
    _3, ... in order, each set directly or as a _FILE, each holding one secret per line. Only a line ends a
    secret: a comma is part of it (splitting `Tr0ub4dor,x` would accept anything signed with `x`)."""
    numbers = sorted({int(m.group(1)) for name in environ if (m := _NUMBERED_SECRET.fullmatch(name))})
    found: dict[str, None] = {}
    for name in ["WEBHOOK_SECRET", *(f"WEBHOOK_SECRET_{n}" for n in numbers)]:
        for line in (read_setting(environ, name) or "").splitlines():
            if line.strip():
                found[line.strip()] = None
    return tuple(found)


def _number(environ: Mapping[str, str], name: str, default, kind=int, minimum=1):
    """A numeric setting: `kind` is int (whole, at least `minimum`) or float (seconds, at least `minimum`)."""
    raw = environ.get(f"PERFBOT_{name}")
    if raw is None or raw == "":
        return default
    try:
        value = kind(raw)
    except ValueError:
        noun = "a whole number" if kind is int else "a number of seconds"
        raise ConfigError(f"PERFBOT_{name}={raw!r} is not {noun}") from None
    if value < minimum:
        raise ConfigError(f"PERFBOT_{name}={value} must be at least {minimum}")
    return value


def _read_quietly(path: Path | None) -> str:
    try:
        return path.read_text(errors="replace") if path is not None and path.is_file() else ""
    except OSError:
        return ""


def parse_bind(raw: str) -> tuple[str, int]:
    host, sep, port = raw.rpartition(":")
    if not sep or not port.isdigit() or not 0 < int(port) < 65536 or not host:
        raise ConfigError(f"PERFBOT_BIND={raw!r} is not HOST:PORT, e.g. {DEFAULT_BIND}")
    return host.strip("[]"), int(port)


@dataclass(frozen=True)
class Settings:
    instance_dir: Path
    database_url: str
    bind: str = DEFAULT_BIND
    webhook_secrets: tuple[str, ...] = field(default=(), repr=False)
    github_api_url: str = DEFAULT_API_URL
    github_token: str | None = field(default=None, repr=False)
    github_app_id: str | None = None
    github_private_key: str | None = field(default=None, repr=False)
    git_base_url: str = "https://github.com"
    # GitHub asks integrations to pace requests, writes most of all, to stay clear of secondary rate limits.
    github_request_interval: float = 0.25
    github_write_interval: float = 1.0
    bot_login: str = "perfbot[bot]"
    max_body_bytes: int = DEFAULT_MAX_BODY
    # A worker's heartbeat renews its leases every third of this: a dead worker's work is due again after it.
    lease_seconds: float = 30.0
    max_attempts: int = 8
    poll_seconds: int = 5
    local_repo: Path | None = None
    anthropic_api_key: str | None = field(default=None, repr=False)
    anthropic_base_url: str | None = None
    review_model: str = "claude-sonnet-4-6"
    review_max_tokens: int = 4096
    # ssh runners: the bot's own key and the only host keys it trusts (see `.perfbot.toml` [[runners]]).
    ssh_key: Path | None = None  # None: <instance>/ssh/id_ed25519
    ssh_known_hosts: Path | None = None  # None: <instance>/ssh/known_hosts
    dashboard_token: str | None = field(default=None, repr=False)  # outside local mode the dashboard needs it
    notify_secret: str | None = field(default=None, repr=False)  # signs [notify] webhook_url POSTs

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None, *, database_url: str | None = None,
                 local_repo: str | Path | None = None) -> Settings:
        environ = os.environ if environ is None else environ
        instance = Path(environ.get("PERFBOT_INSTANCE_DIR") or PROJECT_ROOT / "instance")
        url = database_url or read_setting(environ, "DATABASE_URL") or f"sqlite:///{instance / 'perfbot.sqlite3'}"
        bind = environ.get("PERFBOT_BIND") or DEFAULT_BIND
        parse_bind(bind)
        settings = cls(
            instance_dir=instance,
            database_url=url,
            bind=bind,
            webhook_secrets=webhook_secrets(environ),
            github_api_url=(environ.get("PERFBOT_GITHUB_API_URL") or DEFAULT_API_URL).rstrip("/"),
            github_token=read_setting(environ, "GITHUB_TOKEN"),
            github_app_id=environ.get("PERFBOT_GITHUB_APP_ID"),
            github_private_key=read_setting(environ, "GITHUB_PRIVATE_KEY"),
            git_base_url=(environ.get("PERFBOT_GIT_BASE_URL") or "https://github.com").rstrip("/"),
            github_request_interval=_number(environ, "GITHUB_REQUEST_INTERVAL", 0.25, float, 0),
            github_write_interval=_number(environ, "GITHUB_WRITE_INTERVAL", 1.0, float, 0),
            bot_login=environ.get("PERFBOT_BOT_LOGIN") or "perfbot[bot]",
            max_body_bytes=_number(environ, "MAX_BODY_BYTES", DEFAULT_MAX_BODY),
            lease_seconds=_number(environ, "LEASE_SECONDS", 30.0, float, 1),
            max_attempts=_number(environ, "MAX_ATTEMPTS", 8),
            poll_seconds=_number(environ, "POLL_SECONDS", 5),
            local_repo=Path(local_repo) if local_repo else None,
            anthropic_api_key=read_setting(environ, "ANTHROPIC_API_KEY"),
            anthropic_base_url=environ.get("PERFBOT_ANTHROPIC_BASE_URL") or None,
            review_model=environ.get("PERFBOT_REVIEW_MODEL") or "claude-sonnet-4-6",
            review_max_tokens=_number(environ, "REVIEW_MAX_TOKENS", 4096),
            ssh_key=Path(environ.get("PERFBOT_SSH_KEY") or instance / "ssh/id_ed25519").expanduser(),
            ssh_known_hosts=Path(environ.get("PERFBOT_SSH_KNOWN_HOSTS") or instance / "ssh/known_hosts").expanduser(),
            dashboard_token=read_setting(environ, "DASHBOARD_TOKEN") or None,
            notify_secret=read_setting(environ, "NOTIFY_SECRET") or None,
        )
        settings.check_github()
        return settings

    def check_github(self) -> None:
        if self.github_app_id and not self.github_private_key:
            raise ConfigError("PERFBOT_GITHUB_APP_ID is set without PERFBOT_GITHUB_PRIVATE_KEY(_FILE)")
        if self.github_private_key and not self.github_app_id:
            raise ConfigError("PERFBOT_GITHUB_PRIVATE_KEY is set without PERFBOT_GITHUB_APP_ID")

    @property
    def local_mode(self) -> bool:
        """No GitHub credentials: perfbot watches a local repository and mirrors into the instance folder."""
        return not (self.github_token or self.github_app_id)

    def private_folders(self) -> tuple[Path, ...]:
        """Folders of this host that hold perfbot's own files: never shown to a report's code."""
        return (self.instance_dir.resolve(), Path.home().resolve())

    def secret_values(self) -> tuple[str, ...]:
        """Every configured secret, as text: scrubbed from anything perfbot posts or stores (a second wall
        behind the sandbox). The ssh key counts too, line by line, so a quoted line of it is caught."""
        values = [*self.webhook_secrets, self.github_token, self.github_private_key, self.anthropic_api_key,
                  self.dashboard_token, self.notify_secret]
        for key in (self.github_private_key or "", _read_quietly(self.ssh_key)):
            values += [line.strip() for line in key.splitlines() if len(line.strip()) >= 16 and "-----" not in line]
        return tuple(sorted({v for v in values if v and len(v) >= 8}, key=len, reverse=True))

    @property
    def uses_default_database(self) -> bool:
        return self.database_url == f"sqlite:///{self.instance_dir / 'perfbot.sqlite3'}"

    def require_webhook_secret(self) -> None:
        """Fail closed: outside local mode the service does not start without a webhook secret."""
        if not self.webhook_secrets and not self.local_mode:
            raise ConfigError("PERFBOT_WEBHOOK_SECRET (or PERFBOT_WEBHOOK_SECRET_FILE) is required with GitHub "
                              "credentials; perfbot refuses unsigned webhooks")
