"""GET /metrics in Prometheus' text format: deliveries and jobs, GitHub API calls, LLM tokens and bench seconds."""
from __future__ import annotations

import logging
import os
import sys

from flask import Blueprint, Response, current_app
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, Counter, generate_latest, multiprocess
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily

from bot.adapters.store.lead import metrics_queries as store_metrics

metrics_blueprint = Blueprint("metrics", __name__)
log = logging.getLogger("perfbot.metrics")

# The reviewer's usage keys (Anthropic's names) and the `kind` label each becomes.
TOKEN_KINDS = {
    "input_tokens": "input",
    "output_tokens": "output",
    "cache_creation_input_tokens": "cache_write",
    "cache_read_input_tokens": "cache_read",
}


def job_kind(event: str) -> str:
    """`perfbot` for the jobs perfbot queues itself (perfbot.reconcile, .digest, .verify), else `webhook`."""
    return "perfbot" if event.startswith("perfbot.") else "webhook"


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


class _StoreCollector:
    """Jobs, LLM tokens and bench time, summed from the store at scrape time; `perfbot_store_up` says
    whether those reads worked (a failed read leaves its families empty rather than failing the scrape)."""

    def __init__(self, db) -> None:
        self.db = db

    def collect(self):
        up = GaugeMetricFamily("perfbot_store_up", "1 when the store answered this scrape's reads, else 0")
        ok = True
        for family in (self._jobs, self._tokens, self._bench):
            try:
                yield from family()
            except Exception as exc:
                ok = False
                log.warning("metrics: reading the store failed: %s: %s", exc.__class__.__name__, exc)
        up.add_metric([], 1 if ok else 0)
        yield up

    def _jobs(self):
        gauge = GaugeMetricFamily("perfbot_jobs", "Stored deliveries by kind (webhook or perfbot's own), event "
                                                  "and status", labels=["kind", "event", "status"])
        for event, status, count in store_metrics.jobs_by_status(self.db):
            gauge.add_metric([job_kind(event), event, status], count)
        yield gauge

    def _tokens(self):
        family = CounterMetricFamily("perfbot_llm_tokens", "LLM tokens the reviewer used, by source (dedup "
                                                           "verdicts, report audits, fact readings) and kind",
                                     labels=["source", "kind"])
        totals = store_metrics.token_usage(self.db, tuple(TOKEN_KINDS))
        for (source, key), total in sorted(totals.items(), key=lambda item: (item[0][0], TOKEN_KINDS[item[0][1]])):
            family.add_metric([source, TOKEN_KINDS[key]], total)
        yield family

    def _bench(self):
        seconds = CounterMetricFamily("perfbot_bench_seconds", "Wall seconds of finished bench runs (started to "
                                                               "finished), by runner and verdict",
                                      labels=["runner", "verdict"])
        runs = CounterMetricFamily("perfbot_bench_runs", "Finished bench runs by runner and verdict",
                                   labels=["runner", "verdict"])
        active = GaugeMetricFamily("perfbot_bench_runs_active", "Bench runs queued or running", labels=["status"])
        sums, waiting = store_metrics.bench_time(self.db)
        for labels, (total, count) in sorted(sums.items()):
            seconds.add_metric(list(labels), total)
            runs.add_metric(list(labels), count)
        for status, count in waiting:
            active.add_metric([status], count)
        yield seconds
        yield runs
        yield active


class _GitHubCollector:
    """GitHub API requests this process made (every HTTP exchange, retries included), by method and status."""

    def collect(self):
        family = CounterMetricFamily("perfbot_github_requests", "GitHub API requests made by this process, by "
                                                                "method and HTTP status (error: no answer)",
                                     labels=["method", "status"])
        # The client module is imported only where GitHub is used; not imported means no request was made,
        # and importing it here would load PyGithub into local-mode processes for nothing.
        client = sys.modules.get("bot.adapters.github.client")
        if client is not None:
            for (method, status), count in sorted(client.request_counts().items()):
                family.add_metric([method, status], count)
        yield family


def multiprocess_dir() -> str | None:
    """prometheus_client's folder for the counters of several processes (gunicorn's workers), when set."""
    return os.environ.get("PROMETHEUS_MULTIPROC_DIR") or None


class Metrics:
    """One registry per app, so several apps in one process (tests) never share counters.

    Two kinds of numbers: counters (webhooks received, deliveries and jobs processed, GitHub requests) start at
    zero with the process; what is read from the store at scrape time (deliveries and jobs by status, LLM tokens,
    bench runs and seconds) is the shared truth, the same whichever process is scraped. Under gunicorn
    (PROMETHEUS_MULTIPROC_DIR set, deploy/gunicorn.conf.py) each process writes its counters to a file there and
    a scrape of any process sums them all: a scrape reaches one process, the numbers are every process's."""

    def __init__(self, queue, db=None) -> None:
        self.registry = CollectorRegistry()
        shared = multiprocess_dir() is not None
        # Shared counters are kept in the folder's files, read back by MultiProcessCollector, not by a registry.
        own = None if shared else self.registry
        self._received = Counter("perfbot_webhooks_received", "Webhook requests by event and outcome",
                                 ["event", "outcome"], registry=own)
        self._processed = Counter("perfbot_deliveries_processed", "Deliveries processed by event and outcome",
                                  ["event", "outcome"], registry=own)
        self._jobs = Counter("perfbot_jobs_processed", "Jobs this process ran, by kind (webhook or perfbot's "
                                                       "own) and outcome", ["kind", "outcome"], registry=own)
        if shared:
            multiprocess.MultiProcessCollector(self.registry)
        self.registry.register(_QueueCollector(queue))
        db = db if db is not None else getattr(queue, "db", None)
        if db is not None:
            self.registry.register(_StoreCollector(db))
        self.registry.register(_GitHubCollector())

    def received(self, event: str, outcome: str) -> None:
        self._received.labels(event, outcome).inc()

    def processed(self, event: str, outcome: str) -> None:
        self._processed.labels(event, outcome).inc()
        self._jobs.labels(job_kind(event), outcome).inc()


@metrics_blueprint.get("/metrics")
def scrape():
    registry = current_app.extensions["perfbot"]["metrics"].registry
    return Response(generate_latest(registry), mimetype=CONTENT_TYPE_LATEST)
