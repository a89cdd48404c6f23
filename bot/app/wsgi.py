"""The WSGI entry for gunicorn: `app`, built from the environment on first use, with no worker thread of its own."""
from __future__ import annotations

import logging
import os
import threading
from collections.abc import Mapping

from flask import Flask

from bot.config import Settings

log = logging.getLogger("perfbot.wsgi")
_built: dict[str, Flask] = {}
_lock = threading.Lock()


def make_app(environ: Mapping[str, str] | None = None, *, log_stream=None) -> Flask:
    """A fresh app (what `app` holds; tests and other servers may call it): settings from `environ` (default:
    the process environment), logging set up, the store opened and migrated. No worker thread and no
    scheduler start here, so any number of web processes can serve; `perfbot worker` does the work."""
    from bot.app.logs import configure_logging
    from bot.app.runtime import Runtime

    environ = os.environ if environ is None else environ
    settings = Settings.from_env(environ)
    settings.require_webhook_secret()
    configure_logging(settings, environ, stream=log_stream)
    # gunicorn's request threads (deploy/gunicorn.conf.py reads the same variable) size the pool.
    runtime = Runtime(settings, workers=0, web_threads=int(environ.get("PERFBOT_WEB_THREADS") or 4))
    if settings.local_mode:
        log.warning("local mode (no GitHub credentials): webhooks are refused and the dashboard is open to "
                    "anyone who reaches %s", settings.bind)
    runtime.app.extensions["perfbot"]["runtime"] = runtime
    log.info("perfbot web ready; store %s", runtime.db.safe_url)
    return runtime.app


def after_fork() -> None:
    """In a process forked from the one that built the app (gunicorn's preload): drop the parent's pooled
    database connections without closing them, since the parent still owns those sockets."""
    app = _built.get("app")
    if app is not None:
        app.extensions["perfbot"]["runtime"].db.dispose(close=False)


def __getattr__(name: str):
    # `app` (gunicorn) and `application` (the WSGI convention) are built once, on first access.
    if name not in ("app", "application"):
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    with _lock:
        if "app" not in _built:
            _built["app"] = make_app()
        return _built["app"]
