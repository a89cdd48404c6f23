"""The operator's configuration, one typed model (`Settings`, on pydantic-settings), read when asked for, never at
import time. Its sources, strongest first: what the caller passes, PERFBOT_* variables (a secret also as the
contents of the file PERFBOT_<NAME>_FILE names), then the instance file `<instance>/perfbot.toml`: its
`[service]` table holds any of these settings but the secrets, and its other sections the runners, the sandbox,
the caps' ceilings, the reference sources and the LLM budgets (bot/core/config/instance.py).

The repository's `.perfbot.toml` is never one of these sources: it is untrusted, and parsed apart.
"""
from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import ConfigDict, Field, ValidationError, field_validator
from pydantic_settings import BaseSettings, EnvSettingsSource, PydanticBaseSettingsSource

from bot.core.config.errors import ConfigFileError
from bot.core.config.instance import OperatorConfig, parse_instance_config
from bot.core.config.lines import key_lines, line_for

PROJECT_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_BIND = "127.0.0.1:8000"
DEFAULT_API_URL = "https://api.github.com"
# GitHub caps webhook payloads at 25 MB; anything larger did not come from GitHub.
DEFAULT_MAX_BODY = 25 * 1024 * 1024
INSTANCE_FILE_NAME = "perfbot.toml"
# Settings that may also be a file's contents (PERFBOT_<NAME>_FILE), and that the instance file never holds.
SECRETS = ("webhook_secret", "github_token", "github_private_key", "anthropic_api_key", "dashboard_token",
           "notify_secret", "database_url")


class ConfigError(Exception):
    """A setting is missing or malformed; the message names the variable (or the file and line) and the fix."""


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


class _Environment(EnvSettingsSource):
    """PERFBOT_<FIELD> from the mapping given (not always os.environ), a secret also from PERFBOT_<FIELD>_FILE."""

    def __init__(self, settings_cls: type[BaseSettings], environ: Mapping[str, str]) -> None:
        given = {k: v for k, v in environ.items() if k.startswith("PERFBOT_") and not k.endswith("_FILE")}
        for name in SECRETS[1:]:  # the webhook's secrets are many (rotation): webhook_secrets() reads them
            value = read_setting(environ, name.upper())
            if value is not None:
                given[f"PERFBOT_{name.upper()}"] = value
        self._given = given
        super().__init__(settings_cls, case_sensitive=False, env_prefix="PERFBOT_", env_ignore_empty=True)

    def _load_env_vars(self) -> Mapping[str, str | None]:
        return {name.lower(): value for name, value in self._given.items() if value != ""}


class _InstanceFile(PydanticBaseSettingsSource):
    """`<instance>/perfbot.toml`: `[service]` keys as settings, the other sections as the operator's view."""

    def __init__(self, settings_cls: type[BaseSettings], path: Path) -> None:
        super().__init__(settings_cls)
        self.path, self.text = path, ""
        try:
            self.text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            pass
        except (OSError, UnicodeDecodeError) as exc:
            raise ConfigError(f"{path}: cannot read it ({getattr(exc, 'strerror', None) or exc})") from None

    def get_field_value(self, field, field_name: str) -> tuple[Any, str, bool]:  # unused: __call__ reads the file
        return None, field_name, False

    def __call__(self) -> dict[str, Any]:
        if not self.text:
            return {}
        try:
            service, operator = parse_instance_config(self.text, str(self.path))
        except ConfigFileError as exc:
            raise ConfigError(str(exc)) from None
        for key in service:
            if key in SECRETS or key in ("webhook_secrets", "operator", "instance_dir"):
                raise ConfigError(f"{self.path}:{line_for(key_lines(self.text), ('service', key))}: service.{key}: "
                                  "not written here: " + (f"a secret comes from PERFBOT_{key.upper()}_FILE"
                                                          if key not in ("operator", "instance_dir") else
                                                          "it is the file's own place or its other sections"))
        return {**service, "operator": operator}


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


class Settings(BaseSettings):
    """Built directly (tests, tools) it holds what it is given; `from_env` adds the environment and the file."""

    model_config = ConfigDict(frozen=True, extra="forbid", arbitrary_types_allowed=True)  # type: ignore[assignment]

    instance_dir: Path
    database_url: str
    bind: str = DEFAULT_BIND
    webhook_secrets: tuple[str, ...] = Field((), repr=False)
    github_api_url: str = DEFAULT_API_URL
    github_token: str | None = Field(None, repr=False)
    github_app_id: str | None = None
    github_private_key: str | None = Field(None, repr=False)
    git_base_url: str = "https://github.com"
    # GitHub asks integrations to pace requests, writes most of all, to stay clear of secondary rate limits.
    github_request_interval: float = Field(0.25, ge=0)
    github_write_interval: float = Field(1.0, ge=0)
    bot_login: str = "perfbot[bot]"
    max_body_bytes: int = Field(DEFAULT_MAX_BODY, ge=1)
    # A worker's heartbeat renews its leases every third of this: a dead worker's work is due again after it.
    lease_seconds: float = Field(30.0, gt=0)
    max_attempts: int = Field(8, ge=1)
    poll_seconds: int = Field(5, ge=1)
    local_repo: Path | None = None
    anthropic_api_key: str | None = Field(None, repr=False)
    anthropic_base_url: str | None = None
    review_model: str = "claude-sonnet-4-6"
    review_max_tokens: int = Field(4096, ge=1)
    # ssh runners: the bot's own key and the only host keys it trusts (the instance file's [[runners]]).
    ssh_key: Path | None = None  # None: <instance>/ssh/id_ed25519
    ssh_known_hosts: Path | None = None  # None: <instance>/ssh/known_hosts
    dashboard_token: str | None = Field(None, repr=False)  # outside local mode the dashboard needs it
    notify_secret: str | None = Field(None, repr=False)  # signs [notify] webhook_url POSTs
    # The instance file's runners, sandbox, ceilings, reference sources and LLM budgets (core/config/instance.py).
    operator: OperatorConfig = OperatorConfig()

    @classmethod
    def settings_customise_sources(cls, settings_cls, init_settings, env_settings, dotenv_settings,
                                   file_secret_settings):
        return (init_settings,)  # from_env names its sources itself: the environment it is given, and the file

    @field_validator("bind")
    @classmethod
    def _bind(cls, value: str) -> str:
        parse_bind(value)
        return value

    @field_validator("github_api_url", "git_base_url")
    @classmethod
    def _no_trailing_slash(cls, value: str) -> str:
        return value.rstrip("/")

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None, *, database_url: str | None = None,
                 local_repo: str | Path | None = None) -> Settings:
        environ = os.environ if environ is None else environ
        instance = Path(environ.get("PERFBOT_INSTANCE_DIR") or PROJECT_ROOT / "instance")
        from_file = _InstanceFile(cls, instance / INSTANCE_FILE_NAME)()
        from_environment = _Environment(cls, environ)()
        given: dict[str, Any] = {"instance_dir": instance, "webhook_secrets": webhook_secrets(environ)}
        if database_url:
            given["database_url"] = database_url
        if local_repo:
            given["local_repo"] = Path(local_repo)
        values = {"database_url": f"sqlite:///{instance / 'perfbot.sqlite3'}", **from_file, **from_environment,
                  **given}
        values["ssh_key"] = Path(values.get("ssh_key") or instance / "ssh/id_ed25519").expanduser()
        values["ssh_known_hosts"] = Path(values.get("ssh_known_hosts") or instance / "ssh/known_hosts").expanduser()
        try:
            settings = cls(**values)
        except ValidationError as exc:
            raise ConfigError(_named(exc, from_environment, instance / INSTANCE_FILE_NAME)) from None
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

    def shown_folders(self) -> tuple[tuple[str, str], ...]:
        """The instance folder as a message names it: `instance`, never where it lies on the bot host."""
        names = {str(self.instance_dir.resolve()), str(self.instance_dir.absolute())}
        return tuple((name, "instance") for name in sorted(names) if name not in ("", "/"))

    def secret_values(self) -> tuple[str, ...]:
        """Every configured secret, as text: scrubbed from anything perfbot posts or stores (a second wall
        behind the sandbox). The ssh key counts too, line by line, so a quoted line of it is caught."""
        values = [*self.webhook_secrets, self.github_token, self.github_private_key, self.anthropic_api_key,
                  self.dashboard_token, self.notify_secret, _password(self.database_url)]
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


def _password(url: str) -> str | None:
    try:
        from sqlalchemy.engine import make_url

        return make_url(url).password
    except Exception:  # a malformed URL fails later with its own message; nothing to hide from it here
        return None


def _named(exc: ValidationError, from_environment: Mapping[str, Any], file: Path) -> str:
    """pydantic's first error in the words of where the value came from: the variable, or the file's line."""
    error = exc.errors()[0]
    name = str(error["loc"][0]) if error["loc"] else "(settings)"
    problem = error["msg"].removeprefix("Value error, ")
    if name in from_environment:
        return f"PERFBOT_{name.upper()}={str(error.get('input'))[:80]!r}: {problem}"
    return f"{file}: service.{name}: {problem}"
