"""deploy/: the App manifest, the WSGI entry, gunicorn for real, the image's layout, compose and systemd units."""

# Building the image and starting the units need a Docker engine and systemd as PID 1, which test machines
# lack; these tests run what those files run, the way they run it (docs/deployment.md).
from __future__ import annotations

import html
import io
import json
import logging
import os
import re
import shutil
import signal
import subprocess
import sys
import sysconfig
import time
import zipfile
from pathlib import Path

import pytest
import requests
import yaml
from click.testing import CliRunner

import handlers
from bot.cli import main
from bot.cli.manifest_cmd import AUTOMATIC_EVENTS, EVENTS, PERMISSIONS, manifest, manifest_json
from bot.config import PROJECT_ROOT, ConfigError
from tests.npm_fixtures import webhook_examples
from tests.servers import free_port
from tests.webhooks import post_delivery

DEPLOY = PROJECT_ROOT / "deploy"
# A text sharing 12 characters with a secret is masked in logs (the scrub catches pieces of secrets): the
# delivery id below shares none with these.
SECRET, TOKEN, DASHBOARD = "deploy-test-webhook-secret", "ghp_" + "Dq7" * 12, "deploy-test-dashboard"
WRONG_TOKEN = "deploy-test-dashbaord"  # one typo away from the real one


@pytest.fixture
def restore_logging():
    root = logging.getLogger()
    saved = list(root.handlers), root.level
    yield
    root.handlers[:] = saved[0]
    root.setLevel(saved[1])


# -- the GitHub App manifest -------------------------------------------------------------------------------

def test_the_manifest_subscribes_to_exactly_the_events_handlers_take_plus_workflow_run():
    assert set(EVENTS) == (handlers.github_events() - AUTOMATIC_EVENTS) | {"workflow_run"}
    assert handlers.github_events() >= AUTOMATIC_EVENTS  # installation events arrive without subscribing


def test_the_manifest_asks_for_exactly_the_permissions_perfbot_uses():
    assert manifest()["default_permissions"] == {
        "actions": "write", "contents": "write", "issues": "write", "metadata": "read",
        "pull_requests": "write", "statuses": "write",
    }
    assert manifest()["default_permissions"] == PERMISSIONS


def test_the_committed_manifest_is_what_perfbot_app_manifest_prints():
    assert (DEPLOY / "github" / "app-manifest.json").read_text() == manifest_json()
    result = CliRunner().invoke(main, ["app-manifest"])
    assert result.exit_code == 0 and result.output == manifest_json()


def test_app_manifest_fills_in_the_webhook_url_and_refuses_what_is_not_an_address():
    result = CliRunner().invoke(main, ["app-manifest", "--url", "https://bots.example.org/perfbot/",
                                       "--name", "perfbot-team"])
    document = json.loads(result.output)
    assert document["hook_attributes"] == {"url": "https://bots.example.org/perfbot/webhook", "active": True}
    assert document["redirect_url"] == "https://bots.example.org/perfbot/healthz"
    assert document["name"] == "perfbot-team" and document["public"] is False
    for bad in ("ftp://x.example", "bots.example.org", "https://x.example/?a=1"):
        result = CliRunner().invoke(main, ["app-manifest", "--url", bad])
        assert result.exit_code == 2 and "is not an http(s) address" in result.output
    result = CliRunner().invoke(main, ["app-manifest", "--url", "http://10.0.0.5:8000"])
    assert result.exit_code == 0 and "unencrypted" in result.stderr
    assert json.loads(result.stdout)["hook_attributes"]["url"] == "http://10.0.0.5:8000/webhook"


def test_the_registration_form_posts_the_manifest_to_github():
    result = CliRunner().invoke(main, ["app-manifest", "--url", "https://bots.example.org", "--form",
                                       "--org", "team"])
    page = result.output
    assert '<form action="https://github.com/organizations/team/settings/apps/new" method="post">' in page
    value = re.search(r'name="manifest" value="([^"]*)"', page).group(1)
    assert json.loads(html.unescape(value)) == manifest("https://bots.example.org")


# -- the WSGI entry --------------------------------------------------------------------------------------

def app_environ(tmp_path, **extra) -> dict[str, str]:
    environ = {"PERFBOT_INSTANCE_DIR": str(tmp_path), "PERFBOT_WEBHOOK_SECRET": SECRET,
               "PERFBOT_GITHUB_TOKEN": TOKEN, "PERFBOT_DASHBOARD_TOKEN": DASHBOARD}
    environ.update(extra)
    return environ


def test_importing_the_wsgi_module_reads_no_configuration():
    env = {k: v for k, v in os.environ.items() if not k.startswith("PERFBOT_")}
    env["PERFBOT_GITHUB_TOKEN"] = "t"  # without a webhook secret: building the app would refuse
    probe = "import bot.app.wsgi as w; print(sorted(w._built))"
    out = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_make_app_serves_without_starting_workers_or_the_scheduler(tmp_path, restore_logging):
    from bot.app.wsgi import make_app

    app = make_app(app_environ(tmp_path), log_stream=io.StringIO())
    runtime = app.extensions["perfbot"]["runtime"]
    assert runtime.workers == [] and runtime.threads == [] and not runtime.scheduler.running
    client = app.test_client()
    assert client.get("/healthz").status_code == 200
    assert client.get("/readyz").get_json() == {"status": "ready", "detail": "ok"}
    runtime.stop()


def test_make_app_refuses_github_credentials_without_a_webhook_secret(tmp_path, restore_logging):
    from bot.app.wsgi import make_app

    with pytest.raises(ConfigError, match="PERFBOT_WEBHOOK_SECRET"):
        make_app({"PERFBOT_INSTANCE_DIR": str(tmp_path), "PERFBOT_GITHUB_TOKEN": "t"}, log_stream=io.StringIO())


# -- gunicorn, for real ----------------------------------------------------------------------------------

def gunicorn_config() -> dict:
    pytest.importorskip("gunicorn")
    import runpy

    # The file sets PROMETHEUS_MULTIPROC_DIR for gunicorn's processes; read here, it must not turn this test
    # process's metrics into multiprocess ones.
    before = os.environ.get("PROMETHEUS_MULTIPROC_DIR")
    try:
        return runpy.run_path(str(DEPLOY / "gunicorn.conf.py"))
    finally:
        if before is None:
            os.environ.pop("PROMETHEUS_MULTIPROC_DIR", None)
        else:
            os.environ["PROMETHEUS_MULTIPROC_DIR"] = before


def healthcheck_argv() -> list[str]:
    """The image's HEALTHCHECK command exactly as deploy/Dockerfile writes it."""
    text = (DEPLOY / "Dockerfile").read_text()
    exec_form = re.search(r"^HEALTHCHECK .*\\\n\s+CMD (\[.*\])$", text, re.M).group(1)
    argv = json.loads(exec_form)
    assert argv[0] == "python"
    return [sys.executable, *argv[1:]]


def test_the_gunicorn_configuration(monkeypatch):
    monkeypatch.setenv("PERFBOT_BIND", "0.0.0.0:9000")
    monkeypatch.setenv("PERFBOT_WEB_WORKERS", "3")
    config = gunicorn_config()
    from gunicorn.glogging import Logger

    assert config["wsgi_app"] == "bot.app.wsgi:app" and config["bind"] == ["0.0.0.0:9000"]
    assert config["workers"] == 3 and config["worker_class"] == "gthread" and config["preload_app"] is True
    assert config["timeout"] >= 10 and issubclass(config["logger_class"], Logger)
    assert callable(config["post_fork"]) and config["control_socket_disable"] is True
    assert callable(config["on_starting"]) and callable(config["child_exit"])  # metrics of every process
    assert "PROMETHEUS_MULTIPROC_DIR" not in os.environ


def test_gunicorn_serves_webhooks_and_logs_json_with_the_delivery_and_no_secret(tmp_path):
    gunicorn_config()
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("PERFBOT_")}
    env.update(app_environ(tmp_path / "instance"), PERFBOT_BIND=f"127.0.0.1:{port}", PERFBOT_LOG_FORMAT="json",
               PERFBOT_WEB_WORKERS="2", HOME=str(tmp_path))
    log_path = tmp_path / "gunicorn.log"
    gunicorn = Path(sys.executable).with_name("gunicorn")
    with open(log_path, "w") as sink:
        process = subprocess.Popen([str(gunicorn), "--config", str(DEPLOY / "gunicorn.conf.py")], env=env,
                                   cwd=tmp_path, stdout=sink, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while subprocess.run(healthcheck_argv(), env=env, capture_output=True).returncode != 0:
            assert process.poll() is None, log_path.read_text()[-3000:]
            assert time.monotonic() < deadline, "gunicorn did not answer the image's health check in 60 s"
            time.sleep(0.2)
        payload = webhook_examples("issues")[0]
        response = post_delivery(base, "issues", payload, secret=SECRET, delivery="gunicorn-delivery-1")
        assert response.status_code == 202
        assert post_delivery(base, "issues", payload, secret="forged").status_code == 401
        assert requests.get(f"{base}/readyz", timeout=5).status_code == 200
        assert requests.get(f"{base}/dashboard/?token={DASHBOARD}", timeout=5).status_code == 200
        # a mistyped token is no configured secret a redactor knows: the access line masks every query value
        assert requests.get(f"{base}/dashboard/records?token={WRONG_TOKEN}&state=all", timeout=5).status_code == 401
        assert "perfbot_webhooks_received_total" in requests.get(f"{base}/metrics", timeout=5).text
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=30)
    text = log_path.read_text()
    entries = [json.loads(line) for line in text.splitlines()]  # every line is JSON
    webhook = [e for e in entries if e["logger"] == "gunicorn.access" and e.get("path") == "/webhook"]
    assert {(e["status"], e.get("delivery")) for e in webhook} >= {(202, "gunicorn-delivery-1")}
    assert all(e.get("event") == "issues" for e in webhook)
    assert any(e["logger"] == "perfbot.wsgi" for e in entries)
    for secret in (SECRET, TOKEN, DASHBOARD, WRONG_TOKEN):
        assert secret not in text
    refused = [e for e in entries if e["logger"] == "gunicorn.access" and e.get("status") == 401]
    assert [e.get("query") for e in refused if e.get("path") == "/dashboard/records"] == [
        "token=[redacted]&state=[redacted]"]
    assert not (tmp_path / ".gunicorn").exists()  # no control socket
    from bot.adapters.store.engine import Database
    from bot.adapters.store.queue import DeliveryQueue

    db = Database(f"sqlite:///{tmp_path / 'instance' / 'perfbot.sqlite3'}")
    assert DeliveryQueue(db).get("gunicorn-delivery-1")["event"] == "issues"
    db.dispose()


# -- the image -------------------------------------------------------------------------------------------

def dockerfile() -> str:
    return (DEPLOY / "Dockerfile").read_text()


def test_the_dockerfile_builds_in_two_stages_and_runs_as_a_user_with_what_runners_need():
    text = dockerfile()
    assert re.findall(r"^FROM (\S+)", text, re.M) == ["${PYTHON_IMAGE}", "${PYTHON_IMAGE}"]
    assert "ARG PYTHON_IMAGE=python:3.11-slim" in text and "AS build" in text
    assert '/opt/perfbot/bin/pip install ".[postgres]"' in text and " -e " not in text
    user = re.findall(r"^USER (\S+)", text, re.M)
    assert user == ["10001:10001"]
    packages = re.search(r"apt-get install -y --no-install-recommends ([^\n\\&]+)", text).group(1).split()
    tools = re.search(r'ARG BENCH_TOOLS="([^"]*)"', text).group(1).split()
    assert {"git", "openssh-client"} <= set(packages) and {"gcc", "libc6-dev", "bubblewrap"} <= set(tools)
    assert "/healthz" in " ".join(healthcheck_argv())
    assert re.search(r'^CMD \["gunicorn", "--config", "/opt/perfbot/gunicorn.conf.py"\]', text, re.M)
    assert "COPY deploy/gunicorn.conf.py /opt/perfbot/gunicorn.conf.py" in text


def test_the_build_context_lets_through_everything_the_dockerfile_copies():
    ignore = [line for line in (DEPLOY / "Dockerfile.dockerignore").read_text().splitlines()
              if line and not line.startswith("#")]
    allowed = {line[1:].rstrip("/") for line in ignore if line.startswith("!")}
    copied = set()
    for sources in re.findall(r"^COPY (?!--from)(.+) \S+$", dockerfile(), re.M):
        copied.update(sources.split())
    assert copied == allowed
    assert all((PROJECT_ROOT / path).exists() for path in copied)
    # A link in the package (bot/mcp/ISSUE_FORMAT.md) must find its target in the image's copy too.
    for link in (p for folder in ("bot", "handlers") for p in (PROJECT_ROOT / folder).rglob("*") if p.is_symlink()):
        target = link.resolve().relative_to(PROJECT_ROOT)
        assert any(target == Path(c) or Path(c) in target.parents for c in copied), (link, target)


def test_the_built_wheel_works_installed_outside_the_checkout(tmp_path):
    """The wheel as pip builds it, installed into a fresh venv and run from outside the checkout: its own
    templates render the digest and the dashboard. The fresh venv sees this one's third-party packages through
    a path entry (no download), whose .pth files are not run: this checkout's editable `bot` stays invisible."""
    dist, venv, source = tmp_path / "dist", tmp_path / "venv", tmp_path / "source"
    # Built from a copy of what the Dockerfile copies: setuptools adds what an earlier build left in build/lib, so a
    # checkout's build/ would ship modules and templates that have moved since (a template found twice).
    source.mkdir()
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy2(PROJECT_ROOT / name, source / name)
    for name in ("bot", "handlers"):
        shutil.copytree(PROJECT_ROOT / name, source / name, ignore=shutil.ignore_patterns("__pycache__"))
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation",
                    "--wheel-dir", str(dist), str(source)], check=True, capture_output=True)
    wheel, = dist.glob("perfbot-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    shipped = [n for n in names if n.startswith(("bot/", "handlers/"))]
    assert shipped and all((PROJECT_ROOT / n).is_file() for n in shipped), [
        n for n in shipped if not (PROJECT_ROOT / n).is_file()]  # nothing stale, nothing from elsewhere
    assert "bot/templates/web/base.html" in names and "bot/digest/templates/digest.md.j2" in names
    assert "bot/digest/templates/web/digest.html" in names and "bot/digest/templates/web/digests.html" in names
    assert "bot/bisect/templates/bisect_comment.md.j2" in names
    assert "bot/mcp/ISSUE_FORMAT.md" in names
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    site, = venv.glob("lib/python*/site-packages")
    (site / "deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    subprocess.run([sys.executable, "-m", "pip", "--python", str(venv / "bin" / "python"), "install", "--quiet",
                    "--no-deps", "--no-index", str(wheel)], check=True, capture_output=True)
    demo, instance = tmp_path / "demo", tmp_path / "instance"
    env = {**os.environ, "PERFBOT_INSTANCE_DIR": str(instance), "PYTHONPATH": ""}

    def perfbot(*args: str) -> str:
        done = subprocess.run([str(venv / "bin" / "perfbot"), *args], env=env, cwd=tmp_path, capture_output=True,
                              text=True)
        assert done.returncode == 0, done.stderr
        return done.stdout

    assert perfbot("demo", str(demo))
    perfbot("sync", "--repo", str(demo))
    digest = perfbot("digest", "--repo", str(demo), "--dry-run")
    assert "<!-- perfbot:" in digest and "perf_" in digest
    assert "0 problem(s)" in perfbot("parity", str(demo / "gpu"))  # bot/parity/, a feature package, installed
    page = subprocess.run([str(venv / "bin" / "python"), "-c",
                           "import bot, os\n"
                           "from bot.app import create_app\n"
                           "from bot.config import Settings\n"
                           "from bot.adapters.store.engine import Database\n"
                           "from bot.adapters.store.queue import DeliveryQueue\n"
                           "d = os.environ['PERFBOT_INSTANCE_DIR']\n"
                           "s = Settings(instance_dir=__import__('pathlib').Path(d), "
                           "database_url=f'sqlite:///{d}/perfbot.sqlite3')\n"
                           "app = create_app(s, DeliveryQueue(Database(s.database_url)), wanted_events=frozenset())\n"
                           "page = app.test_client().get('/dashboard/records')\n"
                           "digests = app.test_client().get('/dashboard/digests')\n"  # the digest's page, its base
                           "print(page.status_code, digests.status_code, bot.__file__)\n"
                           "print(digests.get_data(as_text=True).count('id=\"no-digest\"'))\n"
                           "print(page.get_data(as_text=True))"],
                          env=env, cwd=tmp_path, capture_output=True, text=True, check=True).stdout
    (status, digests_status, module), no_digest = page.splitlines()[0].split(), page.splitlines()[1]
    assert status == digests_status == "200" and module.startswith(str(site)), page[:300]
    assert no_digest == "1"  # digests.html (bot/digest/templates/web/) found, within base.html (bot/templates/web/)
    assert "perf_" in page
    spec = subprocess.run([str(venv / "bin" / "python"), "-c",  # what `perfbot mcp` serves as perfbot://format
                           "from bot.mcp.server import FORMAT_FILE\n"
                           "print(FORMAT_FILE, end='\\0')\n"
                           "print(FORMAT_FILE.read_text(encoding='utf-8'), end='')"],
                          env=env, cwd=tmp_path, capture_output=True, text=True, check=True).stdout
    where, text = spec.split("\0", 1)
    assert where.startswith(str(site)) and text == (PROJECT_ROOT / "devs" / "ISSUE_FORMAT.md").read_text("utf-8")


# -- compose ---------------------------------------------------------------------------------------------

SECRET_SETTINGS = ("DATABASE_URL", "WEBHOOK_SECRET", "GITHUB_TOKEN", "GITHUB_PRIVATE_KEY", "DASHBOARD_TOKEN",
                   "ANTHROPIC_API_KEY")


def test_compose_runs_web_worker_and_postgres_with_secrets_from_files():
    compose = yaml.safe_load((DEPLOY / "compose.yaml").read_text())
    services = compose["services"]
    assert set(services) == {"db", "web", "worker"}
    db = services["db"]
    assert db["image"].startswith("postgres:15") and "pg_isready" in " ".join(db["healthcheck"]["test"])
    assert any(v.endswith(":/var/lib/postgresql/data") for v in db["volumes"])
    assert db["environment"]["POSTGRES_PASSWORD_FILE"] == "/run/secrets/postgres_password"
    web, worker = services["web"], services["worker"]
    for service in (web, worker):
        assert service["build"] == {"context": "..", "dockerfile": "deploy/Dockerfile"}
        assert (DEPLOY / service["build"]["context"] / service["build"]["dockerfile"]).resolve() == \
            (DEPLOY / "Dockerfile").resolve()
        assert service["depends_on"]["db"] == {"condition": "service_healthy"}
        env = service["environment"]
        assert env["PERFBOT_LOG_FORMAT"] == "json"
        for name in SECRET_SETTINGS:
            assert f"PERFBOT_{name}" not in env  # never the secret itself
            if f"PERFBOT_{name}_FILE" in env:
                mounted = env[f"PERFBOT_{name}_FILE"].removeprefix("/run/secrets/")
                assert mounted in service["secrets"]
    assert "command" not in web  # the image's CMD: gunicorn
    assert worker["command"][:2] == ["perfbot", "worker"]
    assert "http://127.0.0.1:9101/readyz" in " ".join(worker["healthcheck"]["test"])
    assert "web" not in worker["depends_on"]  # migrations take a lock: the processes start in any order
    assert {name: spec["file"] for name, spec in compose["secrets"].items()} == {
        name: f"./secrets/{name}" for name in
        ("postgres_password", "database_url", "webhook_secret", "github_private_key", "dashboard_token")}
    assert (DEPLOY / "secrets" / ".gitignore").read_text().splitlines()[1:] == ["*", "!.gitignore"]


# -- systemd ---------------------------------------------------------------------------------------------

UNITS = ("perfbot-web.service", "perfbot-worker@.service")


def unit(name: str) -> dict[str, list[str]]:
    settings: dict[str, list[str]] = {}
    for line in (DEPLOY / "systemd" / name).read_text().splitlines():
        if "=" in line and not line.startswith("#"):
            key, _, val = line.partition("=")
            settings.setdefault(key, []).append(val)
    return settings


@pytest.mark.parametrize("name", UNITS)
def test_units_run_as_perfbot_hardened_and_read_secrets_as_credentials(name):
    settings = unit(name)
    assert settings["User"] == ["perfbot"] and settings["NoNewPrivileges"] == ["yes"]
    assert settings["ProtectSystem"] == ["strict"] and settings["ReadWritePaths"] == ["/var/lib/perfbot"]
    assert settings["StateDirectory"] == ["perfbot"] and settings["CapabilityBoundingSet"] == [""]
    credentials = {v.split(":")[0] for v in settings["LoadCredential"]}
    files = " ".join(settings["Environment"])
    for credential in credentials:
        assert f"_FILE=%d/{credential}" in files
    assert "PERFBOT_LOG_FORMAT=json" in files


@pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason="systemd-analyze is not installed")
def test_systemd_analyze_accepts_the_units_and_rates_their_exposure(tmp_path):
    """Offline checks only: starting the units needs systemd as PID 1, which this machine does not run."""
    bin_dir = Path(sys.executable).parent
    for name in UNITS:
        text = (DEPLOY / "systemd" / name).read_text().replace("/opt/perfbot/bin/", f"{bin_dir}/")
        (tmp_path / name.replace("@.", "@1.")).write_text(text)
    files = [str(tmp_path / n.replace("@.", "@1.")) for n in UNITS]
    verify = subprocess.run(["systemd-analyze", "verify", "--man=no", *files], capture_output=True, text=True)
    assert verify.returncode == 0 and verify.stdout + verify.stderr == "", verify.stderr
    for path, threshold in zip(files, (20, 40), strict=False):  # exposure times 10: at most 2.0 and 4.0
        security = subprocess.run(["systemd-analyze", "security", "--offline=yes", f"--threshold={threshold}",
                                   path], capture_output=True, text=True)
        assert security.returncode == 0, security.stdout[-1500:]
