"""The Flask application factory: blueprints for the webhook, health, metrics and dashboard; no config at import."""
from __future__ import annotations

from flask import Flask, jsonify

from bot.adapters.store.queue import DeliveryQueue
from bot.app.dashboard import web
from bot.app.health import health
from bot.app.metrics import Metrics, metrics_blueprint
from bot.app.webhook import webhook
from bot.config import Settings


def create_app(settings: Settings, queue: DeliveryQueue, *, wanted_events: frozenset[str],
               metrics: Metrics | None = None, readiness=None) -> Flask:
    """Build the app around a queue; `wanted_events` are those some handler takes (others are acknowledged only)."""
    app = Flask(__name__)
    app.config.update(MAX_CONTENT_LENGTH=settings.max_body_bytes)
    app.extensions["perfbot"] = {
        "settings": settings,
        "queue": queue,
        "wanted_events": wanted_events,
        "metrics": metrics or Metrics(queue),
        "readiness": readiness or (lambda: (True, "ok")),
    }
    @app.errorhandler(413)
    def too_large(_error):
        return jsonify({"error": f"body over {settings.max_body_bytes} bytes; GitHub never sends more"}), 413

    app.register_blueprint(webhook)
    app.register_blueprint(health)
    app.register_blueprint(metrics_blueprint)
    app.register_blueprint(web)  # / and the read-only dashboard under /dashboard
    return app
