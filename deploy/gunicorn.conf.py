"""gunicorn settings for perfbot's web process: PERFBOT_BIND, the app from bot.app.wsgi, perfbot's log format."""
import os
import shutil
import tempfile

# Counters summed over every worker process (prometheus_client's multiprocess mode): set before the app, and so
# prometheus_client, is loaded; a scrape reaches one process but reports them all. Emptied when gunicorn starts.
os.environ.setdefault("PROMETHEUS_MULTIPROC_DIR", tempfile.mkdtemp(prefix="perfbot-metrics-"))

from bot.app.logs import gunicorn_logger_class

wsgi_app = "bot.app.wsgi:app"
bind = [os.environ.get("PERFBOT_BIND", "127.0.0.1:8000")]

# The web process only verifies, stores and answers (and renders the dashboard); a few processes with a few
# threads each cover GitHub's delivery rate. The work itself is done by `perfbot worker`.
workers = int(os.environ.get("PERFBOT_WEB_WORKERS", "2"))
worker_class = "gthread"
threads = int(os.environ.get("PERFBOT_WEB_THREADS", "4"))

# Build the app once in the master, so the store is migrated once, not by every worker at the same time;
# each forked worker then drops the pooled connections it inherited (see post_fork).
preload_app = True

# GitHub gives up on a delivery after 10 s; a request still running at 30 s is stuck, not slow.
timeout = 30
graceful_timeout = 20
keepalive = 5
# Deliveries are capped by PERFBOT_MAX_BODY_BYTES in the app; headers have no reason to be large.
limit_request_line = 8190
limit_request_fields = 100

# Behind a reverse proxy on the same host or network, trust its X-Forwarded-* (set to the proxy's address).
forwarded_allow_ips = os.environ.get("PERFBOT_FORWARDED_ALLOW_IPS", "127.0.0.1")

accesslog = "-"
errorlog = "-"
loglevel = os.environ.get("PERFBOT_LOG_LEVEL", "info").lower()
logger_class = gunicorn_logger_class()
proc_name = "perfbot-web"
# gunicorn 24+ opens a control socket under $HOME; perfbot does not use it, and the home may be read-only.
control_socket_disable = True


def post_fork(server, worker):
    from bot.app import wsgi

    wsgi.after_fork()


def on_starting(server):
    """Counters of a previous run stay out of this one's."""
    folder = os.environ["PROMETHEUS_MULTIPROC_DIR"]
    shutil.rmtree(folder, ignore_errors=True)
    os.makedirs(folder, exist_ok=True)


def child_exit(server, worker):
    from prometheus_client import multiprocess

    multiprocess.mark_process_dead(worker.pid)
