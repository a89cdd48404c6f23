"""/metrics beyond the webhook counters: jobs by kind, GitHub API calls, LLM tokens and bench seconds."""
from __future__ import annotations

from collections import Counter
from datetime import UTC, datetime, timedelta

import pytest
from prometheus_client.parser import text_string_to_metric_families

import handlers
from bot.adapters.github.client import GitHubClients, request_counts
from bot.adapters.github.issues import GitHubIssues
from bot.adapters.store.queue import DeliveryQueue
from bot.adapters.store.reviews.dedup_store import VerdictCache, save_audit
from bot.adapters.store.reviews.llm_cache import LlmAnswerCache
from bot.adapters.store.service_models import BenchRun, Delivery
from bot.app import create_app
from bot.app.metrics import Metrics
from bot.config import Settings
from bot.core.dedup.verdicts import Verdict
from bot.core.lint.audit import AuditResult
from bot.errors import TransientError

REPO = "team/runtime"
T0 = datetime(2026, 11, 30, 9, 0, tzinfo=UTC)


def scrape(app) -> dict[tuple[str, tuple], float]:
    """Every sample of /metrics as {(name, sorted labels): value}."""
    response = app.test_client().get("/metrics")
    assert response.status_code == 200
    return {(s.name, tuple(sorted(s.labels.items()))): s.value
            for family in text_string_to_metric_families(response.get_data(as_text=True)) for s in family.samples}


def value(samples, name: str, **labels) -> float | None:
    return samples.get((name, tuple(sorted(labels.items()))))


@pytest.fixture
def app(database, tmp_path):
    settings = Settings(instance_dir=tmp_path, database_url=database.url, webhook_secrets=("s",), github_token="t")
    return create_app(settings, DeliveryQueue(database), wanted_events=handlers.github_events())


def add_delivery(session, delivery_id: str, event: str, status: str) -> None:
    session.add(Delivery(id=delivery_id, event=event, action=None, repo=REPO, installation_id=None, payload="{}",
                         received_at=T0, status=status, attempts=1, next_attempt_at=T0))


def add_run(session, runner: str, verdict: str, seconds: float | None, status: str = "done") -> None:
    started = T0 if seconds is not None else None
    finished = T0 + timedelta(seconds=seconds) if seconds is not None and status == "done" else None
    session.add(BenchRun(full_name=REPO, slug="perf_x", runner=runner, head_sha="a" * 40, verdict=verdict,
                         created_at=T0, status=status, started_at=started, finished_at=finished))


def test_jobs_are_counted_by_kind_from_the_store_and_in_this_process(app, database):
    with database.session() as session:
        add_delivery(session, "d1", "push", "done")
        add_delivery(session, "d2", "push", "done")
        add_delivery(session, "d3", "issue_comment", "failed")
        add_delivery(session, "reconcile-2026113009", "perfbot.reconcile", "done")
        add_delivery(session, "bench-7", "perfbot.verify", "pending")
    metrics = app.extensions["perfbot"]["metrics"]
    metrics.processed("push", "done")
    metrics.processed("perfbot.digest", "done")
    metrics.processed("perfbot.verify", "retry")
    samples = scrape(app)
    assert value(samples, "perfbot_jobs", kind="webhook", event="push", status="done") == 2
    assert value(samples, "perfbot_jobs", kind="webhook", event="issue_comment", status="failed") == 1
    assert value(samples, "perfbot_jobs", kind="perfbot", event="perfbot.reconcile", status="done") == 1
    assert value(samples, "perfbot_jobs", kind="perfbot", event="perfbot.verify", status="pending") == 1
    assert value(samples, "perfbot_jobs_processed_total", kind="webhook", outcome="done") == 1
    assert value(samples, "perfbot_jobs_processed_total", kind="perfbot", outcome="done") == 1
    assert value(samples, "perfbot_jobs_processed_total", kind="perfbot", outcome="retry") == 1
    # What was there before stays: per-event counters and the queue by status.
    assert value(samples, "perfbot_deliveries_processed_total", event="perfbot.digest", outcome="done") == 1
    assert value(samples, "perfbot_deliveries", status="done") == 3
    assert value(samples, "perfbot_store_up") == 1


def test_llm_tokens_are_summed_from_the_answer_cache_by_source_and_kind(app, database):
    usage = {"input_tokens": 1200, "output_tokens": 80, "cache_creation_input_tokens": 3000,
             "cache_read_input_tokens": 0}
    verdicts = VerdictCache(database)
    for n, extra in enumerate(({}, {"cache_read_input_tokens": 3000, "batch": 1})):
        verdicts.put(f"n{n}", "o", "perf_a", "perf_b",
                     Verdict("distinct", 0.9, (), None, "agent:claude", "v1", {**usage, **extra}))
    verdicts.put("n9", "o", "perf_c", "perf_b", Verdict("distinct", 0.5, (), None, "offline", "v1"))
    save_audit(database, REPO, "perf_a", "h", "v1",
               AuditResult((), (), "agent:claude", {"input_tokens": 500, "output_tokens": 40}))
    LlmAnswerCache(database, "facts").put("h", "claude", "f1", {"answer": None}, {"input_tokens": 70})
    samples = scrape(app)
    assert value(samples, "perfbot_llm_tokens_total", source="dedup", kind="input") == 2400
    assert value(samples, "perfbot_llm_tokens_total", source="dedup", kind="output") == 160
    assert value(samples, "perfbot_llm_tokens_total", source="dedup", kind="cache_write") == 6000
    assert value(samples, "perfbot_llm_tokens_total", source="dedup", kind="cache_read") == 3000
    assert value(samples, "perfbot_llm_tokens_total", source="audit", kind="input") == 500
    assert value(samples, "perfbot_llm_tokens_total", source="audit", kind="cache_read") == 0
    assert value(samples, "perfbot_llm_tokens_total", source="facts", kind="input") == 70
    assert not [key for key in samples if key[0] == "perfbot_llm_tokens_total" and ("kind", "batch") in key[1]]


def test_bench_seconds_are_summed_by_runner_and_verdict(app, database):
    with database.session() as session:
        add_run(session, "local", "pass", 90.5)
        add_run(session, "local", "pass", 30.0)
        add_run(session, "cuda-box", "fail", 600.0)
        add_run(session, "local", "cancelled", None)  # cancelled while queued: finished, never started
        session.add(BenchRun(full_name=REPO, slug="perf_y", runner="local", head_sha="b" * 40, verdict="cancelled",
                             created_at=T0, status="done", started_at=None, finished_at=T0))
        add_run(session, "local", "", 5.0, status="running")
        add_run(session, "", "", None, status="queued")
    samples = scrape(app)
    assert value(samples, "perfbot_bench_seconds_total", runner="local", verdict="pass") == 120.5
    assert value(samples, "perfbot_bench_seconds_total", runner="cuda-box", verdict="fail") == 600.0
    assert value(samples, "perfbot_bench_seconds_total", runner="local", verdict="cancelled") == 0.0
    assert value(samples, "perfbot_bench_runs_total", runner="local", verdict="pass") == 2
    assert value(samples, "perfbot_bench_runs_total", runner="local", verdict="cancelled") == 1
    assert value(samples, "perfbot_bench_runs_active", status="running") == 1
    assert value(samples, "perfbot_bench_runs_active", status="queued") == 1


def test_github_requests_are_every_http_exchange_including_retries_and_token_mints(github, github_app_key,
                                                                                   tmp_path, app):
    github.add_repo(REPO)
    github.install_app(77, [REPO], github_app_key, app_id=1234)
    settings = Settings(instance_dir=tmp_path, database_url="sqlite://", github_api_url=github.url,
                        github_app_id="1234", github_private_key=github_app_key, github_request_interval=0,
                        github_write_interval=0)
    clients = GitHubClients(settings)
    before = Counter(request_counts())
    issues = GitHubIssues(clients.for_installation(77), REPO, clients.own_login)
    number = issues.create_issue(title="t", body="b", labels=())
    github.fail_next(2, status=502)  # a read is retried in-process by PyGithub: three exchanges for one call
    assert clients.for_installation(77).get_repo(REPO).get_issue(number).title == "t"
    issues.update_issue(number, title="t2", body="b", labels=(), state="open", state_reason=None)
    clients.close()
    made = Counter(request_counts())
    made.subtract(before)
    seen = Counter((r.method, str(r.status)) for r in github.requests)
    assert +made == seen
    assert made[("POST", "201")] >= 2  # the installation token and the issue
    assert made[("GET", "502")] == 2 and made[("PATCH", "200")] == 1
    samples = scrape(app)
    for (method, status), count in seen.items():
        assert value(samples, "perfbot_github_requests_total", method=method, status=status) >= count


def test_a_github_request_that_gets_no_answer_counts_as_an_error(tmp_path):
    from tests.servers import free_port

    port = free_port()  # a port nothing listens on
    settings = Settings(instance_dir=tmp_path, database_url="sqlite://", github_api_url=f"http://127.0.0.1:{port}",
                        github_token="t", github_request_interval=0, github_write_interval=0)
    clients = GitHubClients(settings)
    before = request_counts().get(("GET", "error"), 0)
    with pytest.raises(TransientError):  # unreachable: unknown for now, asked again next time
        clients.own_login()
    clients.close()
    assert request_counts().get(("GET", "error"), 0) - before == 4  # the first try and PyGithub's 3 retries


class _Broken:
    """A store that fails every read, as a database that went away would."""

    def session(self):
        raise ConnectionError("database unreachable")

    def counts(self):
        raise ConnectionError("database unreachable")


def test_a_scrape_still_answers_when_the_store_does_not(tmp_path):
    settings = Settings(instance_dir=tmp_path, database_url="sqlite://", webhook_secrets=("s",), github_token="t")
    broken = _Broken()
    app = create_app(settings, broken, wanted_events=frozenset(), metrics=Metrics(broken, db=broken))
    samples = scrape(app)
    assert value(samples, "perfbot_store_up") == 0
    assert not [key for key in samples if key[0] in ("perfbot_jobs", "perfbot_llm_tokens_total")]


def test_gunicorns_processes_are_counted_together_whichever_one_a_scrape_reaches(tmp_path):
    """deploy/gunicorn.conf.py turns on prometheus_client's multiprocess mode: with two web processes, every
    scrape reports every delivery, not the share of the process it happened to reach."""
    import os
    import signal
    import subprocess
    import sys
    import time
    from concurrent.futures import ThreadPoolExecutor
    from pathlib import Path

    import requests

    from tests.servers import free_port
    from tests.webhooks import post_delivery

    pytest.importorskip("gunicorn")
    deploy = Path(__file__).resolve().parents[2] / "deploy"
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PERFBOT_", "PROMETHEUS_"))}
    env.update(PERFBOT_INSTANCE_DIR=str(tmp_path / "instance"), PERFBOT_WEBHOOK_SECRET="s",
               PERFBOT_GITHUB_TOKEN="t", PERFBOT_BIND=f"127.0.0.1:{port}", PERFBOT_WEB_WORKERS="2",
               PERFBOT_WEB_THREADS="1", HOME=str(tmp_path))
    log = tmp_path / "gunicorn.log"
    with open(log, "w") as sink:
        process = subprocess.Popen([str(Path(sys.executable).with_name("gunicorn")), "--config",
                                    str(deploy / "gunicorn.conf.py")], env=env, cwd=tmp_path, stdout=sink,
                                   stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                if requests.get(f"{base}/healthz", timeout=2).status_code == 200:
                    break
            except requests.RequestException:
                pass
            assert process.poll() is None and time.monotonic() < deadline, log.read_text()[-3000:]
            time.sleep(0.2)
        with ThreadPoolExecutor(4) as pool:  # at once, so both processes take some
            answers = list(pool.map(lambda n: post_delivery(base, "ping", {"zen": "z"}, secret="s").status_code,
                                    range(24)))
        assert answers == [200] * 24
        seen = []
        for _ in range(6):
            text = requests.get(f"{base}/metrics", timeout=5).text
            samples = {(s.name, tuple(sorted(s.labels.items()))): s.value
                       for family in text_string_to_metric_families(text) for s in family.samples}
            seen.append(value(samples, "perfbot_webhooks_received_total", event="ping", outcome="ping"))
        assert seen == [24.0] * 6, seen
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=30)
