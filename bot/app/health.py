"""GET /healthz (the process answers) and GET /readyz (the store answers and the worker runs); a `perfbot worker`
serves them, with its /metrics, on an address of its own."""
from __future__ import annotations

import threading
from collections.abc import Callable

from flask import Blueprint, Flask, current_app, jsonify

health = Blueprint("health", __name__)


@health.get("/healthz")
def alive():
    return jsonify({"status": "ok"})


@health.get("/readyz")
def ready():
    ok, detail = current_app.extensions["perfbot"]["readiness"]()
    return jsonify({"status": "ready" if ok else "not ready", "detail": detail}), 200 if ok else 503


def serve_worker_health(host: str, port: int, readiness: Callable[[], tuple[bool, str]], metrics) -> Callable[[], None]:
    """/healthz, /readyz and /metrics of a worker process on HOST:PORT, from a thread; returns how to stop it.
    OSError when the address cannot be had."""
    from waitress.server import create_server

    from bot.app.metrics import metrics_blueprint

    app = Flask("perfbot.worker")
    app.extensions["perfbot"] = {"readiness": readiness, "metrics": metrics}
    app.register_blueprint(health)
    app.register_blueprint(metrics_blueprint)
    server = create_server(app, host=host, port=port, threads=2, ident="perfbot-worker")
    threading.Thread(target=server.run, name="worker-health", daemon=True).start()
    return server.close
