"""Structured logs: one JSON object a line with the delivery it concerns, and no secret ever written."""
from __future__ import annotations

import io
import json
import logging
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from bot.app.logs import (
    MASK,
    JsonFormatter,
    Redactor,
    access_fields,
    configure_logging,
    delivery_context,
    log_options,
    secrets_of,
)
from bot.config import ConfigError, Settings

WEBHOOK_SECRET = "whsec-rotate-me-1234"
OLD_SECRET = "previous-webhook-secret"
TOKEN = "ghp_" + "A1b2C3d4" * 5
ANTHROPIC = "sk-ant-api03-" + "x9" * 20
DASHBOARD = "dash-token-7f3a9c"
DB_PASSWORD = "pg-pass-w0rd"
PRIVATE_KEY = ("-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun\n"
               "VTLw7onLRnrq0/IzW7yWR7QkrmBL7jTKEn5u+qKhbwKfBstIs+bMY2Zkp18gnTxK\n-----END RSA PRIVATE KEY-----")
NOTIFY = "notify-hmac-secret-42"
ALL_SECRETS = (WEBHOOK_SECRET, OLD_SECRET, TOKEN, ANTHROPIC, DASHBOARD, DB_PASSWORD, PRIVATE_KEY,
               PRIVATE_KEY.splitlines()[1], NOTIFY)


def settings(tmp_path) -> Settings:
    return Settings(instance_dir=tmp_path, database_url=f"postgresql+psycopg://perfbot:{DB_PASSWORD}@db/perfbot",
                    webhook_secrets=(WEBHOOK_SECRET, OLD_SECRET), github_app_id="12",
                    github_private_key=PRIVATE_KEY, anthropic_api_key=ANTHROPIC, dashboard_token=DASHBOARD,
                    notify_secret=NOTIFY)


@pytest.fixture
def capture(tmp_path):
    """The root logger writing JSON into a buffer, with `settings`' secrets to mask; restored afterwards."""
    root = logging.getLogger()
    saved = (list(root.handlers), root.level)
    stream = io.StringIO()
    handler = configure_logging(settings(tmp_path), {"PERFBOT_LOG_FORMAT": "json"}, stream=stream)
    for other in [h for h in root.handlers if h is not handler]:
        root.removeHandler(other)  # pytest's capture handler would format records a second time
    yield lambda: [json.loads(line) for line in stream.getvalue().splitlines()]
    root.handlers[:] = saved[0]
    root.setLevel(saved[1])


def test_a_json_line_has_time_level_logger_message_and_delivery(capture):
    logging.getLogger("perfbot.worker").warning("delivery %s: transient failure, retry in %.0fs", "d-1", 30.0,
                                                extra={"delivery": "d-1"})
    [entry] = capture()
    assert entry["level"] == "WARNING" and entry["logger"] == "perfbot.worker"
    assert entry["message"] == "delivery d-1: transient failure, retry in 30s"
    assert entry["delivery"] == "d-1"
    assert entry["time"].endswith("+00:00") and "T" in entry["time"]


def test_records_inside_a_delivery_context_carry_its_id_unless_they_name_their_own(capture):
    log = logging.getLogger("perfbot.handlers")
    with delivery_context("72d3162e-cc78-11e3-81ab-4c9367dc0958"):
        log.info("syncing")
        log.info("other", extra={"delivery": "explicit"})
    log.info("outside")
    entries = capture()
    assert [e.get("delivery") for e in entries] == ["72d3162e-cc78-11e3-81ab-4c9367dc0958", "explicit", None]


def test_extras_become_fields_and_exceptions_their_text(capture):
    try:
        raise ValueError("boom")
    except ValueError:
        logging.getLogger("perfbot.x").exception("failed", extra={"repo": "team/runtime", "attempt": 3})
    [entry] = capture()
    assert entry["repo"] == "team/runtime" and entry["attempt"] == 3
    assert "Traceback" in entry["exception"] and "ValueError: boom" in entry["exception"]


def test_no_configured_secret_reaches_the_log_in_messages_arguments_fields_or_tracebacks(capture):
    log = logging.getLogger("perfbot.leaky")
    log.info(f"secret in the message: {WEBHOOK_SECRET}")
    log.info("secret in the arguments: %s %s", OLD_SECRET, DASHBOARD)
    log.info("key: %s", PRIVATE_KEY, extra={"header": f"Authorization: token {TOKEN}"})
    log.info("payload %s", json.dumps({"key": PRIVATE_KEY}))  # the key's newlines escaped by JSON
    log.info("store at postgresql+psycopg://perfbot:%s@db/perfbot", DB_PASSWORD)
    try:
        raise RuntimeError(f"anthropic refused key {ANTHROPIC}")
    except RuntimeError:
        log.exception("reviewer failed")
    text = "\n".join(json.dumps(e) for e in capture())
    for secret in ALL_SECRETS:
        assert secret not in text and json.dumps(secret)[1:-1] not in text
    assert text.count(MASK) >= 7


def test_credentials_perfbot_never_configured_are_masked_by_their_shape():
    redact = Redactor()
    minted = "ghs_" + "Zz09" * 9
    assert redact(f"token {minted} expires") == f"token {MASK} expires"
    assert redact("git push https://x-access-token:abc123def@github.com/a/b") == \
        f"git push https://x-access-token:{MASK}@github.com/a/b"
    assert redact("GET /healthz?code=0123abcd&state=x") == f"GET /healthz?code={MASK}&state=x"
    assert redact("GET /dashboard/?token=s3cr3t") == f"GET /dashboard/?token={MASK}"
    assert redact("Bearer abcdefgh12345") == f"Bearer {MASK}"
    assert redact("https://blob.example/a.zip?sv=2024&sig=Ab%2Fc") == f"https://blob.example/a.zip?sv=2024&sig={MASK}"
    assert redact("the token expired, asking for a new one") == "the token expired, asking for a new one"


def test_short_secrets_are_not_masked_everywhere_and_every_settings_secret_is_known(tmp_path):
    assert Redactor(["abc"])("abc abc") == "abc abc"
    found = secrets_of(settings(tmp_path))
    # Settings.secret_values, the posting wall's list: the App key whole, and each line of it besides
    assert set(found) >= {WEBHOOK_SECRET, OLD_SECRET, PRIVATE_KEY, ANTHROPIC, DASHBOARD, DB_PASSWORD, NOTIFY}
    assert set(found) - {WEBHOOK_SECRET, OLD_SECRET, PRIVATE_KEY, ANTHROPIC, DASHBOARD, DB_PASSWORD, NOTIFY} <= \
        {line for line in PRIVATE_KEY.splitlines() if "-----" not in line}


def test_text_format_names_the_delivery_and_bad_settings_are_refused(tmp_path):
    record = logging.LogRecord("perfbot.worker", logging.INFO, __file__, 1, "done", (), None)
    record.delivery = "d-9"
    stream = io.StringIO()
    handler = configure_logging(None, {"PERFBOT_LOG_FORMAT": "text"}, stream=stream)
    try:
        handler.handle(record)
    finally:
        logging.getLogger().removeHandler(handler)
    assert stream.getvalue().rstrip().endswith("INFO perfbot.worker: done [delivery d-9]")
    assert log_options({}) == ("text", logging.INFO)
    assert log_options({"PERFBOT_LOG_FORMAT": "JSON", "PERFBOT_LOG_LEVEL": "debug"}) == ("json", logging.DEBUG)
    with pytest.raises(ConfigError, match="PERFBOT_LOG_FORMAT"):
        log_options({"PERFBOT_LOG_FORMAT": "yaml"})
    with pytest.raises(ConfigError, match="PERFBOT_LOG_LEVEL"):
        log_options({"PERFBOT_LOG_LEVEL": "loud"})


def test_configuring_twice_leaves_one_handler():
    root = logging.getLogger()
    before = list(root.handlers)
    try:
        first = configure_logging(None, {}, stream=io.StringIO())
        second = configure_logging(None, {}, stream=io.StringIO())
        assert first not in root.handlers and [h for h in root.handlers if type(h) is type(second)] == [second]
    finally:
        root.handlers[:] = before


def test_access_fields_carry_the_delivery_and_event():
    fields = access_fields({"REQUEST_METHOD": "POST", "PATH_INFO": "/webhook", "QUERY_STRING": "",
                            "REMOTE_ADDR": "140.82.115.1", "HTTP_X_GITHUB_DELIVERY": "abc",
                            "HTTP_X_GITHUB_EVENT": "push"}, "202 ACCEPTED", 21, 0.0123)
    assert fields == {"method": "POST", "path": "/webhook", "query": None, "status": 202, "bytes": 21,
                      "duration_ms": 12.3, "remote": "140.82.115.1", "user_agent": None, "delivery": "abc",
                      "event": "push"}
    line = JsonFormatter().format(logging.makeLogRecord({"name": "gunicorn.access", "levelname": "INFO",
                                                         "msg": "POST /webhook 202", **fields}))
    assert json.loads(line)["delivery"] == "abc" and "user_agent" not in json.loads(line)


def test_perfbot_worker_logs_json_lines_without_its_secrets(tmp_path):
    """`perfbot worker` as a process: PERFBOT_LOG_FORMAT=json makes every log line a JSON object."""
    secret_file = tmp_path / "webhook_secret"
    secret_file.write_text(WEBHOOK_SECRET + "\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("PERFBOT_")}
    env.update(PERFBOT_INSTANCE_DIR=str(tmp_path), PERFBOT_LOG_FORMAT="json", PERFBOT_LOG_LEVEL="DEBUG",
               PERFBOT_WEBHOOK_SECRET_FILE=str(secret_file))
    perfbot = Path(sys.executable).with_name("perfbot")
    log_file = tmp_path / "worker.log"
    with open(log_file, "w") as sink:
        process = subprocess.Popen([str(perfbot), "worker"], env=env, stderr=sink, cwd=tmp_path)
    try:
        deadline = time.monotonic() + 60
        while "perfbot worker running" not in log_file.read_text() and time.monotonic() < deadline:
            assert process.poll() is None, log_file.read_text()[-2000:]
            time.sleep(0.1)
        time.sleep(1)  # the scheduler's first jobs and the worker's first claims log too
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=30)
    err = log_file.read_text()
    lines = [line for line in err.splitlines() if line.startswith("{")]
    entries = [json.loads(line) for line in lines]
    assert any(e["logger"].startswith("alembic") for e in entries), err[-2000:]
    assert all({"time", "level", "logger", "message"} <= set(e) for e in entries)
    # Besides JSON, only the command's own banner is printed (by click, not through logging).
    assert [line for line in err.splitlines() if not line.startswith("{")] == \
        [line for line in err.splitlines() if line.startswith("perfbot worker running")]
    assert WEBHOOK_SECRET not in err
