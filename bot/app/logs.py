"""Log lines as JSON objects (or text) that name the delivery they concern and never show a secret."""
from __future__ import annotations

import contextvars
import json
import logging
import os
import re
import sys
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from datetime import UTC, datetime

from bot.config import ConfigError, Settings
from bot.core.tracker.outgoing import Scrub

FORMATS = ("text", "json")
MASK = "[redacted]"
# A shorter secret would blank out ordinary words; such a secret is too weak to deploy anyway.
MIN_SECRET_LENGTH = 4
# Attributes every LogRecord has; anything else on a record came from `extra=` and is written as a field.
_STANDARD = frozenset(vars(logging.LogRecord("", 0, "", 0, "", (), None))) | {"message", "asctime", "taskName"}
_CORE = ("time", "level", "logger", "message", "delivery", "exception", "stack")
_delivery: contextvars.ContextVar[str | None] = contextvars.ContextVar("perfbot_delivery", default=None)

# Credentials perfbot never configured itself but may still meet: minted installation tokens, keys, a URL's
# password, a one-time App manifest code, a dashboard token or a storage URL's signature in a query string.
_PATTERNS = (
    (re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----.*?-----END [A-Z ]*PRIVATE KEY-----", re.S), MASK),
    (re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,})"), MASK),
    (re.compile(r"\bsk-ant-[A-Za-z0-9_-]{8,}"), MASK),
    (re.compile(r"(?i)(authorization[\"']?\s*[:=]\s*[\"']?(?:bearer|token|basic)\s+)[^\s\"',]+"), rf"\1{MASK}"),
    (re.compile(r"(?i)\b(bearer\s+)[A-Za-z0-9._~+/=-]{8,}"), rf"\1{MASK}"),
    (re.compile(r"(://[^/\s:@]+:)[^/\s@]+@"), rf"\1{MASK}@"),
    (re.compile(r"(?i)([?&](?:token|code|access_token|client_secret|sig|x-amz-signature)=)[^&\s#\"']+"),
     rf"\1{MASK}"),
)


class Redactor:
    """Replaces configured secret values (whole, reversed, in base64 or in part: the posting wall's Scrub), and
    anything shaped like a credential, with a mask."""

    def __init__(self, secrets: Iterable[str] = ()) -> None:
        values = set()
        for secret in secrets:
            if secret and len(secret) >= MIN_SECRET_LENGTH:
                values.add(secret)
                values.add(json.dumps(secret)[1:-1])  # as it reads inside a JSON dump of a payload
        self._secrets = Scrub(tuple(values), MASK)

    def __call__(self, text: str) -> str:
        text = self._secrets(text)
        for pattern, replacement in _PATTERNS:
            text = pattern.sub(replacement, text)
        return text


def secrets_of(settings: Settings | None) -> list[str]:
    """The one secret list (Settings.secret_values): what the posting wall scrubs is what the log masks."""
    return [] if settings is None else list(settings.secret_values())


def redactor_from_env(environ: Mapping[str, str]) -> Redactor:
    """The redactor for processes that log before perfbot's settings are built (gunicorn's master)."""
    try:
        return Redactor(secrets_of(Settings.from_env(environ)))
    except ConfigError:  # the app's own start reports the bad setting; credential shapes are still masked
        return Redactor()


@contextmanager
def delivery_context(delivery_id: str | None) -> Iterator[None]:
    """Every record logged inside the block (in this thread or task) carries `delivery_id`."""
    token = _delivery.set(delivery_id)
    try:
        yield
    finally:
        _delivery.reset(token)


class DeliveryFilter(logging.Filter):
    """Adds the delivery of the surrounding `delivery_context` to records that do not name one."""

    def filter(self, record: logging.LogRecord) -> bool:
        if getattr(record, "delivery", None) is None:
            current = _delivery.get()
            if current is not None:
                record.delivery = current
        return True


class RedactingFilter(logging.Filter):
    """Masks secrets in the message, the traceback and every string field before any formatter sees them."""

    _traceback = logging.Formatter()

    def __init__(self, redactor: Redactor) -> None:
        super().__init__()
        self.redact = redactor

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:  # arguments that do not fit the message: the handler reports it, unredacted args dropped
            message = str(record.msg)
        record.msg, record.args = self.redact(message), None
        if record.exc_info and not record.exc_text:
            record.exc_text = self._traceback.formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = self.redact(record.exc_text)
        if record.stack_info:
            record.stack_info = self.redact(record.stack_info)
        for key, value in list(vars(record).items()):
            if key not in _STANDARD and isinstance(value, str):
                setattr(record, key, self.redact(value))
        return True


def _extras(record: logging.LogRecord) -> dict:
    return {k: v for k, v in vars(record).items()
            if k not in _STANDARD and k not in _CORE and not k.startswith("_") and v is not None}


class JsonFormatter(logging.Formatter):
    """One JSON object per line: time (UTC, ISO 8601), level, logger, message, delivery, extras, exception."""

    def format(self, record: logging.LogRecord) -> str:
        entry = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        delivery = getattr(record, "delivery", None)
        if delivery is not None:
            entry["delivery"] = delivery
        entry.update(_extras(record))
        if record.exc_info and not record.exc_text:
            record.exc_text = self.formatException(record.exc_info)
        if record.exc_text:
            entry["exception"] = record.exc_text
        if record.stack_info:
            entry["stack"] = self.formatStack(record.stack_info)
        return json.dumps(entry, default=str, ensure_ascii=False)


class TextFormatter(logging.Formatter):
    """The familiar `time LEVEL logger: message`, with `[delivery ID]` when the record names one."""

    def __init__(self) -> None:
        super().__init__("%(asctime)s %(levelname)s %(name)s: %(message)s")

    def formatMessage(self, record: logging.LogRecord) -> str:
        line = super().formatMessage(record)
        delivery = getattr(record, "delivery", None)
        return f"{line} [delivery {delivery}]" if delivery is not None else line


def log_options(environ: Mapping[str, str]) -> tuple[str, int]:
    """PERFBOT_LOG_FORMAT (text | json; default text) and PERFBOT_LOG_LEVEL (default INFO)."""
    fmt = (environ.get("PERFBOT_LOG_FORMAT") or "text").strip().lower()
    if fmt not in FORMATS:
        raise ConfigError(f"PERFBOT_LOG_FORMAT={fmt!r} is neither text nor json")
    name = (environ.get("PERFBOT_LOG_LEVEL") or "INFO").strip().upper()
    level = logging.getLevelName(name)
    if not isinstance(level, int):
        raise ConfigError(f"PERFBOT_LOG_LEVEL={name!r} is not DEBUG, INFO, WARNING or ERROR")
    return fmt, level


def formatter_for(fmt: str) -> logging.Formatter:
    return JsonFormatter() if fmt == "json" else TextFormatter()


def prepare_handler(handler: logging.Handler, fmt: str, redactor: Redactor) -> logging.Handler:
    """Give a handler perfbot's format and filters (delivery first, so the redactor sees its field too)."""
    handler.setFormatter(formatter_for(fmt))
    for old in [f for f in handler.filters if isinstance(f, (DeliveryFilter, RedactingFilter))]:
        handler.removeFilter(old)
    handler.addFilter(DeliveryFilter())
    handler.addFilter(RedactingFilter(redactor))
    return handler


def configure_logging(settings: Settings | None = None, environ: Mapping[str, str] | None = None,
                      stream=None) -> logging.Handler:
    """The root logger of a perfbot process: one handler on stderr, in the configured format, secrets masked.
    Calling it again replaces the handler it installed before."""
    fmt, level = log_options(os.environ if environ is None else environ)
    root = logging.getLogger()
    for old in [h for h in root.handlers if isinstance(h, _OwnHandler)]:
        root.removeHandler(old)
    handler = prepare_handler(_OwnHandler(sys.stderr if stream is None else stream), fmt,
                              Redactor(secrets_of(settings)))
    root.addHandler(handler)
    root.setLevel(level)
    logging.getLogger("apscheduler").setLevel(max(level, logging.WARNING))  # one line per poll would drown the log
    logging.getLogger("bm25s").setLevel(max(level, logging.WARNING))  # it logs every index build at DEBUG
    return handler


class _OwnHandler(logging.StreamHandler):
    """The handler configure_logging installed, so a second call replaces it rather than adding one."""


def access_fields(environ: Mapping[str, str], status, sent, seconds: float) -> dict:
    """What an access log line holds: the request, its answer, and GitHub's delivery id and event if any."""
    code: int | str
    try:
        code = int(str(status).split(None, 1)[0])
    except ValueError:
        code = str(status)
    return {
        "method": environ.get("REQUEST_METHOD"),
        "path": environ.get("PATH_INFO"),
        "query": redacted_query(environ.get("QUERY_STRING") or ""),
        "status": code,
        "bytes": sent,
        "duration_ms": round(seconds * 1000, 1),
        "remote": environ.get("REMOTE_ADDR"),
        "user_agent": environ.get("HTTP_USER_AGENT"),
        "delivery": environ.get("HTTP_X_GITHUB_DELIVERY"),
        "event": environ.get("HTTP_X_GITHUB_EVENT"),
    }


def redacted_query(query: str) -> str | None:
    """A query string as an access line shows it: the parameters' names, every value masked. A value may be a
    credential (the dashboard's ?token=, right or wrong), and a wrong one is no pattern a redactor could know."""
    if not query:
        return None
    return "&".join(f"{part.split('=', 1)[0][:100]}={MASK}" if "=" in part else MASK
                    for part in query.split("&") if part)


def gunicorn_logger_class():
    """A gunicorn Logger whose error and access logs use perfbot's format and redaction; access lines are
    structured (method, path, status, duration, delivery) rather than Apache's combined format."""
    from gunicorn.glogging import Logger

    class PerfbotGunicornLogger(Logger):
        def setup(self, cfg):
            super().setup(cfg)
            fmt, _level = log_options(os.environ)
            redactor = redactor_from_env(os.environ)
            for log in (self.error_log, self.access_log):
                for handler in log.handlers:
                    if getattr(handler, "_gunicorn", False):
                        prepare_handler(handler, fmt, redactor)

        def access(self, resp, req, environ, request_time):
            if not self.access_log_enabled:
                return
            fields = access_fields(environ, resp.status, getattr(resp, "sent", None),
                                   request_time.total_seconds())
            try:
                self.access_log.info("%s %s %s", fields["method"], fields["path"], fields["status"], extra=fields)
            except Exception:
                self.exception("access log")

    return PerfbotGunicornLogger
