"""GET /metrics in Prometheus' text format: deliveries received and processed, and the queue by status."""
from __future__ import annotations

from flask import Blueprint, Response, current_app
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, Counter, generate_latest
from prometheus_client.core import GaugeMetricFamily

metrics_blueprint = Blueprint("metrics", __name__)


class _QueueCollector:
    """Reads the queue's counts at scrape time, so every process reports the shared truth."""

    def __init__(self, queue) -> None:
        self.queue = queue

    def collect(self):
        gauge = GaugeMetricFamily("perfbot_deliveries", "Stored deliveries by status", labels=["status"])
        try:
            for status, count in sorted(self.queue.counts().items()):
                gauge.add_metric([status], count)
        except Exception:  # a scrape must not fail because the database hiccups
            pass
        yield gauge


class Metrics:
    """One registry per app, so several apps in one process (tests) never share counters."""

    def __init__(self, queue) -> None:
        self.registry = CollectorRegistry()
        self._received = Counter("perfbot_webhooks_received", "Webhook requests by event and outcome",
                                 ["event", "outcome"], registry=self.registry)
        self._processed = Counter("perfbot_deliveries_processed", "Deliveries processed by event and outcome",
                                  ["event", "outcome"], registry=self.registry)
        self.registry.register(_QueueCollector(queue))

    def received(self, event: str, outcome: str) -> None:
        self._received.labels(event, outcome).inc()

    def processed(self, event: str, outcome: str) -> None:
        self._processed.labels(event, outcome).inc()


@metrics_blueprint.get("/metrics")
def scrape():
    registry = current_app.extensions["perfbot"]["metrics"].registry
    return Response(generate_latest(registry), mimetype=CONTENT_TYPE_LATEST)
