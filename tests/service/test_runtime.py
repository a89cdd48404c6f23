"""The composed runtime: local mode end to end, the hourly reconcile, and the commands that run it."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from click.testing import CliRunner

from bot.adapters.local_issues import folder_for
from bot.app.runtime import Runtime
from bot.cli import main
from bot.config import Settings
from tests.reports import canonical_report

PERFBOT = Path(sys.executable).with_name("perfbot")


def local_settings(tmp_path, repo: Path, database_url: str) -> Settings:
    return Settings(instance_dir=tmp_path / "instance", database_url=database_url, local_repo=repo, poll_seconds=1)


def wait_for(predicate, seconds: float = 20.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    return False


def local_issues(settings: Settings, key: str) -> dict:
    state = folder_for(settings.instance_dir, key) / "issues.json"
    return json.loads(state.read_text())["issues"] if state.exists() else {}


def test_local_mode_turns_new_commits_into_pushes_and_mirrors_into_files(git_repo, db_url, tmp_path):
    git_repo.write("devs/issues/perf_a.md", canonical_report("perf_a")).commit("first report")
    settings = local_settings(tmp_path, git_repo.root, db_url)
    runtime = Runtime(settings)
    key = "local/repo"
    try:
        assert runtime.poll_local_repo() and not runtime.poll_local_repo()  # one delivery per new head
        assert runtime.workers[0].run_once()
        assert [i["title"].split(":")[0] for i in local_issues(settings, key).values()] == ["perf_a"]
        git_repo.write("devs/issues/perf_b.md", canonical_report("perf_b")).commit("second report")
        runtime.start_background()  # the scheduler polls every second, the worker thread picks it up
        assert wait_for(lambda: len(local_issues(settings, key)) == 2)
    finally:
        runtime.stop()


def test_the_hourly_reconcile_runs_once_per_hour_and_heals_a_missed_push(git_repo, db_url, tmp_path):
    git_repo.write("devs/issues/perf_a.md", canonical_report("perf_a")).commit("report nobody pushed")
    settings = local_settings(tmp_path, git_repo.root, db_url)
    runtime = Runtime(settings)
    try:
        assert runtime.queue_reconcile() and not runtime.queue_reconcile()
        assert runtime.workers[0].run_once()
        assert len(local_issues(settings, "local/repo")) == 1
        assert runtime.queue.counts() == {"done": 1}
    finally:
        runtime.stop()


def test_the_digest_check_runs_once_per_quarter_hour_and_posts_a_due_digest(git_repo, db_url, tmp_path):
    git_repo.write("devs/issues/perf_a.md", canonical_report("perf_a"))
    git_repo.write(".perfbot.toml", '[digest]\nschedule = "mon 09:00"\n').commit("a report and a digest schedule")
    settings = local_settings(tmp_path, git_repo.root, db_url)
    runtime = Runtime(settings)
    try:
        assert runtime.queue_reconcile() and runtime.workers[0].run_once()  # the records first
        assert runtime.queue_digest_check() and not runtime.queue_digest_check()
        assert runtime.workers[0].run_once()
        digests = [i for i in local_issues(settings, "local/repo").values() if "digest" in i["labels"]]
        assert len(digests) == 1 and digests[0]["title"].startswith("perfbot digest ")
        assert runtime.scheduler.get_job("digest") is None  # jobs are added by start_background only
    finally:
        runtime.stop()


def test_serve_refuses_to_start_with_github_credentials_but_no_webhook_secret(monkeypatch, tmp_path):
    monkeypatch.setenv("PERFBOT_INSTANCE_DIR", str(tmp_path))
    monkeypatch.setenv("PERFBOT_GITHUB_TOKEN", "a-token")
    monkeypatch.delenv("PERFBOT_WEBHOOK_SECRET", raising=False)
    result = CliRunner().invoke(main, ["serve"])
    assert result.exit_code == 2 and "PERFBOT_WEBHOOK_SECRET" in result.output


def test_bad_settings_are_named(monkeypatch, tmp_path):
    monkeypatch.setenv("PERFBOT_INSTANCE_DIR", str(tmp_path))
    monkeypatch.setenv("PERFBOT_BIND", "localhost")
    result = CliRunner().invoke(main, ["serve"])
    assert result.exit_code == 2 and "PERFBOT_BIND" in result.output
    monkeypatch.delenv("PERFBOT_BIND")
    monkeypatch.setenv("PERFBOT_WEBHOOK_SECRET_FILE", str(tmp_path / "missing"))
    result = CliRunner().invoke(main, ["serve"])
    assert result.exit_code == 2 and "PERFBOT_WEBHOOK_SECRET_FILE" in result.output


def test_secrets_come_from_files_and_several_rotate(tmp_path):
    secret_file = tmp_path / "secret"
    secret_file.write_text("new-secret\nold-secret\n")
    settings = Settings.from_env({"PERFBOT_WEBHOOK_SECRET_FILE": str(secret_file),
                                  "PERFBOT_INSTANCE_DIR": str(tmp_path)})
    assert settings.webhook_secrets == ("new-secret", "old-secret")
    assert "new-secret" not in repr(settings)


def test_the_worker_command_runs_until_sigterm(git_repo, tmp_path):
    git_repo.write("devs/issues/perf_a.md", canonical_report("perf_a")).commit("report")
    database_url = f"sqlite:///{tmp_path / 'perfbot.sqlite3'}"
    runtime = Runtime(local_settings(tmp_path, git_repo.root, database_url))
    runtime.queue_reconcile()
    runtime.stop()
    env = dict(os.environ, PERFBOT_DATABASE_URL=database_url, PERFBOT_INSTANCE_DIR=str(tmp_path / "instance"))
    process = subprocess.Popen([str(PERFBOT), "worker"], env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    runtime = Runtime(local_settings(tmp_path, git_repo.root, database_url))
    try:
        # The reconcile queued here, and the worker's own scheduled jobs: every one done, none failed.
        assert wait_for(lambda: set(runtime.queue.counts()) == {"done"}), runtime.queue.listing()
    finally:
        process.send_signal(signal.SIGTERM)
        output = process.communicate(timeout=20)[0].decode()
        runtime.stop()
    assert process.returncode == 0, output


def test_local_mode_dedup_opens_a_merge_branch_in_the_watched_repository(git_repo, db_url, tmp_path):
    u24 = "def mix(x):\n  x = x ^ (x >> 12)\n  x = x * 2935 + 11\n  return x ^ (x >> 7)\n"

    def report(slug: str, title: str) -> str:
        text = canonical_report(slug, title=title, ratio=120, root_cause="Every u24 operation is an OPE node.")
        start = text.index("```bend\n") + len("```bend\n")
        return text[:start] + u24 + text[text.index("\n```", start) + 1:]

    git_repo.write("devs/issues/perf_u24_mul.md", report("perf_u24_mul", "u24 multiply boxes values")).commit("old")
    settings = local_settings(tmp_path, git_repo.root, db_url)
    runtime = Runtime(settings)
    try:
        runtime.poll_local_repo()
        runtime.workers[0].run_once()
        git_repo.write("devs/issues/perf_u24_hash.md", report("perf_u24_hash",
                                                              "u24 hashing boxes values")).commit("new")
        runtime.poll_local_repo()
        runtime.workers[0].run_once()
    finally:
        runtime.stop()
    state = json.loads((folder_for(settings.instance_dir, "local/repo") / "issues.json").read_text())
    assert [p["head"] for p in state["pulls"].values()] == ["perfbot/merge-perf_u24_hash"]
    assert all(any(c["body"].startswith("<!-- perfbot:dedup") for c in i["comments"]) for i in state["issues"].values())
    branch = git_repo.repo.commit("perfbot/merge-perf_u24_hash")
    assert "supersedes: [perf_u24_mul]" in (branch.tree / "devs/issues/perf_u24_hash.md").data_stream.read().decode()
    assert git_repo.repo.head.commit.message.strip() == "new"  # the checked-out branch is untouched


def test_serve_says_clearly_when_its_address_is_taken(tmp_path, git_repo):
    import socket as sockets

    with sockets.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        env = dict(os.environ, PERFBOT_BIND=f"127.0.0.1:{port}", PERFBOT_INSTANCE_DIR=str(tmp_path / "instance"))
        env.pop("PERFBOT_GITHUB_TOKEN", None)
        done = subprocess.run([str(PERFBOT), "serve", "--repo", str(git_repo.root)], env=env, capture_output=True,
                              text=True, timeout=60)
    assert done.returncode == 1 and f"cannot listen on 127.0.0.1:{port}" in done.stderr, done.stderr[-2000:]


def test_every_line_a_delivery_logs_carries_its_delivery_id(git_repo, db_url, tmp_path, caplog):
    import logging

    from bot.app.logs import DeliveryFilter

    git_repo.write("devs/issues/perf_a.md", canonical_report("perf_a")).commit("a report")
    runtime = Runtime(local_settings(tmp_path, git_repo.root, db_url))
    caplog.handler.addFilter(DeliveryFilter())  # as the JSON log handler of `perfbot serve` and `worker` has
    try:
        runtime.queue_reconcile()
        with caplog.at_level(logging.INFO, logger="perfbot"):
            assert runtime.workers[0].run_once()
    finally:
        runtime.stop()
    synced = [r for r in caplog.records if r.name == "perfbot.services" and "sync" in r.getMessage()]
    assert synced and all(getattr(r, "delivery", "").startswith("reconcile-") for r in synced)


def test_a_separate_worker_serves_its_own_metrics(git_repo, tmp_path):
    import urllib.request

    from tests.servers import free_port

    database_url = f"sqlite:///{tmp_path / 'perfbot.sqlite3'}"
    port = free_port()
    env = dict(os.environ, PERFBOT_DATABASE_URL=database_url, PERFBOT_INSTANCE_DIR=str(tmp_path / "instance"))
    process = subprocess.Popen([str(PERFBOT), "worker", "--metrics-bind", f"127.0.0.1:{port}"], env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        def scraped() -> str | None:
            try:
                return urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=2).read().decode()
            except OSError:
                return None

        assert wait_for(lambda: scraped() is not None)
        assert wait_for(lambda: 'perfbot_jobs_processed_total{kind="perfbot"' in (scraped() or ""))
        for path, answer in (("healthz", {"status": "ok"}), ("readyz", {"status": "ready", "detail": "ok"})):
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/{path}", timeout=5) as reply:
                assert json.loads(reply.read()) == answer
    finally:
        process.send_signal(signal.SIGTERM)
        output = process.communicate(timeout=20)[0].decode()
    assert process.returncode == 0, output


def test_a_bad_metrics_address_is_named_before_the_worker_starts(tmp_path, monkeypatch):
    monkeypatch.setenv("PERFBOT_INSTANCE_DIR", str(tmp_path / "instance"))
    result = CliRunner().invoke(main, ["worker", "--metrics-bind", "nope"])
    assert result.exit_code == 2 and "--metrics-bind 'nope' is not HOST:PORT, e.g. 0.0.0.0:9101" in result.output
    assert not (tmp_path / "instance" / "perfbot.sqlite3").exists()  # nothing was started or migrated
