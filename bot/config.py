"""Service settings from PERFBOT_* environment variables, read when asked for, never at import time."""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping

PROJECT_ROOT = Path(__file__).resolve().parent.parent


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


@dataclass(frozen=True)
class Settings:
    instance_dir: Path
    database_url: str

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None, *, database_url: str | None = None) -> Settings:
        environ = os.environ if environ is None else environ
        instance = Path(environ.get("PERFBOT_INSTANCE_DIR") or PROJECT_ROOT / "instance")
        url = database_url or read_setting(environ, "DATABASE_URL") or f"sqlite:///{instance / 'perfbot.sqlite3'}"
        return cls(instance_dir=instance, database_url=url)

    @property
    def uses_default_database(self) -> bool:
        return self.database_url == f"sqlite:///{self.instance_dir / 'perfbot.sqlite3'}"
