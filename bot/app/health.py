"""GET /healthz (the process answers) and GET /readyz (the store answers and the worker runs)."""
from __future__ import annotations

from flask import Blueprint, current_app, jsonify

health = Blueprint("health", __name__)


@health.get("/healthz")
def alive():
    return jsonify({"status": "ok"})


@health.get("/readyz")
def ready():
    ok, detail = current_app.extensions["perfbot"]["readiness"]()
    return jsonify({"status": "ready" if ok else "not ready", "detail": detail}), 200 if ok else 503
