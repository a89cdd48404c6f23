"""The composition root: settings in; the app, the worker threads and the scheduler wired together and run."""
from __future__ import annotations

import json
import logging
import os
import socket
import threading
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from apscheduler.schedulers.background import BackgroundScheduler

import handlers
from bot.adapters.clones import Clones
from bot.adapters.git import GitError, GitRepository, local_full_name
from bot.adapters.local_issues import FileIssues, folder_for
from bot.adapters.reviewers import reviewer_for
from bot.adapters.runners import SshOptions, contain, make_runner, readable_problem
from bot.adapters.store.engine import Database, pool_size_for
from bot.adapters.store.queue import COMMENT_EVENTS, DeliveryQueue, NewDelivery
from bot.app import create_app
from bot.app.logs import delivery_context
from bot.app.metrics import Metrics
from bot.config import ConfigError, Settings
from bot.core.tracker.outgoing import Outgoing
from bot.errors import CredentialsRejected
from bot.services import redeliveries
from bot.services.bench.bench_flow import BenchFlow
from bot.services.bench.fix_flow import FixFlow
from bot.services.usecases import BotServices, RepoSource
from bot.services.worker import Leases, Worker

if TYPE_CHECKING:
    from bot.adapters.github.client import GitHubClients

log = logging.getLogger("perfbot.runtime")
ACTIONS_POLL_MINUTES = 3
READY_TIMEOUT_SECONDS = 2.0  # within a load balancer's usual probe timeout
STOP_SECONDS = 5.0  # how long a stopping process waits for its threads after handing their work back


def refuse_exposed(settings: Settings, environ=None, readable: tuple[str, ...] = ()) -> None:
    """perfbot does not start where a report's sandbox would show its own files: the instance folder, the ssh
    key and known hosts, and every PERFBOT_*_FILE secret must lie outside the system folders the sandbox shows
    (/usr and the rest of contain.SYSTEM, the /etc files it shows) and outside the operator's `readable`."""
    environ = os.environ if environ is None else environ
    for folder in readable:  # the instance file's allow-list, checked once at start as every run checks it
        if problem := readable_problem(folder, settings.private_folders()):
            raise ConfigError(f"instance file [sandbox] readable: {problem}")
    own = [("the instance folder (PERFBOT_INSTANCE_DIR)", settings.instance_dir),
           ("the ssh key (PERFBOT_SSH_KEY)", settings.ssh_key), ("the ssh known hosts", settings.ssh_known_hosts),
           *((name, Path(value)) for name, value in sorted(environ.items())
             if name.startswith("PERFBOT_") and name.endswith("_FILE") and value)]
    for what, path in own:
        if path is None:
            continue
        real = os.path.realpath(os.path.expanduser(str(path)))
        for _, folder in contain.exposed([real], [os.path.realpath(r) for r in readable]):
            raise ConfigError(f"{what} lies in {folder}, which the sandbox shows to every report's code: move it "
                              "to a folder of its own outside /usr, /opt/homebrew and the readable folders "
                              "(e.g. /var/lib/perfbot)")


class Runtime:
    def __init__(self, settings: Settings, *, workers: int = 1, web_threads: int = 0) -> None:
        refuse_exposed(settings, readable=settings.operator.sandbox.readable)  # before anything is made there
        self.settings = settings
        # Each thread that touches the store gets its connection: workers, the web server's, the heartbeat.
        self.db = Database(settings.database_url, pool_size=pool_size_for(workers + web_threads))
        self.queue = DeliveryQueue(self.db)
        self.metrics = Metrics(self.queue)
        self.clients: GitHubClients | None = None  # outside local mode
        self.services = self._services()
        self.stop_event = threading.Event()
        owner = f"{socket.gethostname()}:{os.getpid()}"
        self.leases = Leases(self.queue, settings.lease_seconds)
        # With two threads or more, the last is a lane for comments: a long sync or bench run on every other
        # thread never holds up a command's answer.
        self.workers = [
            Worker(self.queue, self._dispatch, owner=f"{owner}:{n}",
                   lease_seconds=settings.lease_seconds, max_attempts=settings.max_attempts,
                   on_outcome=self.metrics.processed, leases=self.leases,
                   only=COMMENT_EVENTS if workers > 1 and n == workers - 1 else None)
            for n in range(workers)
        ]
        self.threads: list[threading.Thread] = []
        self.scheduler = BackgroundScheduler(timezone="UTC")
        self.app = create_app(settings, self.queue, wanted_events=handlers.github_events(), metrics=self.metrics,
                              readiness=self.ready)

    def _dispatch(self, event):
        """Every line a delivery's handlers log carries its id, so one delivery's story can be read whole.
        A handler refused with 401 runs once more with a new installation token (GitHub may end one before its
        stated expiry); refused again, or with a configured token, the failure stands (permanent)."""
        if event.name == redeliveries.EVENT:  # the App's webhook, not a repository: no handler's business
            return self._redeliver_failed()
        # One repository session for the delivery: its handlers share one fetch and take the lock once.
        with delivery_context(event.delivery_id), self.services.delivery(event.repo):
            failures = handlers.dispatch(event, self.services)
            refused = {name for name, exc in failures if isinstance(exc, CredentialsRejected)}
            if refused and self.clients is not None and self.clients.renew_token(event.installation_id):
                log.warning("delivery %s: GitHub refused the installation token; retrying %s with a new one",
                            event.delivery_id, ", ".join(sorted(refused)))
                again = [h for h in handlers.HANDLERS if h.__name__.rsplit(".", 1)[-1] in refused]
                failures = [f for f in failures if f[0] not in refused] + handlers.dispatch(event, self.services,
                                                                                           handlers=again)
            return failures

    def _redeliver_failed(self) -> list[tuple[str, BaseException]]:
        if self.clients is None:
            return []
        try:
            redeliveries.redeliver_failed(self.clients, lambda guid: self.queue.get(guid) is not None)
        except Exception as exc:  # a GitHub outage: the check runs again, as any delivery would
            return [("redeliveries", exc)]
        return []

    def _runner(self, conf, repo_path: Path, config):
        return make_runner(conf, repo_path, self.settings.instance_dir / "bench" / conf.name, config,
                           SshOptions.from_settings(self.settings), service=not self.settings.local_mode,
                           private=self.settings.private_folders(), secrets=self.settings.secret_values())

    def _services(self) -> BotServices:
        settings = self.settings
        fixes = FixFlow(self.db, self.queue.enqueue)
        bench = BenchFlow(self.db, self._runner, operator=settings.operator)
        if settings.local_mode:
            local = {local_full_name(settings.local_repo): settings.local_repo} if settings.local_repo else {}
            return BotServices(self.db, lambda full_name, _id: FileIssues(folder_for(settings.instance_dir, full_name)),
                               RepoSource(local=local), bot_login=settings.bot_login, reviewer=reviewer_for(settings),
                               outgoing=Outgoing(settings.secret_values(), folders=settings.shown_folders()),
                               fixes=fixes, bench=bench)
        from bot.adapters.github.client import GitHubClients
        from bot.adapters.github.issues import GitHubIssues

        clients = self.clients = GitHubClients(settings)
        clones = Clones(settings.instance_dir / "repos", settings.git_base_url)
        return BotServices(
            self.db,
            lambda full_name, installation: GitHubIssues(clients.for_installation(installation), full_name,
                                                         clients.own_login),
            RepoSource(fetch=lambda full_name, installation: clones.fetch(full_name, clients.git_token(installation)),
                       push=lambda full_name, installation, branch: clones.push(full_name, branch,
                                                                                clients.git_token(installation))),
            bot_login=settings.bot_login,
            file_url=lambda full_name: f"{settings.git_base_url}/{full_name}/blob/HEAD",
            own_login=clients.own_login,
            reviewer=reviewer_for(settings),
            outgoing=Outgoing(settings.secret_values(), folders=settings.shown_folders()),
            fixes=fixes,
            bench=bench,
        )

    def ready(self) -> tuple[bool, str]:
        """Ready when the store takes a write within READY_TIMEOUT_SECONDS (a read-only or locked store cannot
        acknowledge a delivery) and every worker thread runs."""
        problem = self.db.takes_a_write(READY_TIMEOUT_SECONDS)
        if problem is not None:
            return False, problem
        dead = [t.name for t in self.threads if not t.is_alive()]
        return (not dead, f"stopped: {', '.join(dead)}" if dead else "ok")

    def start_background(self) -> None:
        for worker in self.workers:
            thread = threading.Thread(target=worker.run_until, args=(self.stop_event,), name=f"worker-{worker.owner}",
                                      daemon=True)
            thread.start()
            self.threads.append(thread)
        heartbeat = threading.Thread(target=self.leases.run, args=(self.stop_event,), name="lease-heartbeat",
                                     daemon=True)
        heartbeat.start()
        self.threads.append(heartbeat)
        self.scheduler.add_job(self.queue_reconcile, "interval", hours=1, id="reconcile", coalesce=True,
                               max_instances=1, next_run_time=datetime.now(UTC))
        # Digests are due at each repository's own [digest] schedule: a cron job looks every quarter hour
        # (and once at start, so a week missed while the bot was down is caught up).
        self.scheduler.add_job(self.queue_digest_check, "cron", minute="*/15", id="digest", coalesce=True,
                               max_instances=1, next_run_time=datetime.now(UTC))
        if not self.settings.local_mode:  # bench runs dispatched to GitHub Actions whose webhook never came
            self.scheduler.add_job(self.queue_actions_poll, "interval", minutes=ACTIONS_POLL_MINUTES,
                                   id="actions-poll", coalesce=True, max_instances=1)
        if self.settings.github_app_id and not self.settings.github_token:  # only an App can list its deliveries
            self.scheduler.add_job(self.queue_redelivery_check, "interval", minutes=redeliveries.INTERVAL_MINUTES,
                                   id="redeliveries", coalesce=True, max_instances=1)
        if self.settings.local_mode and self.settings.local_repo:
            self.scheduler.add_job(self.poll_local_repo, "interval", seconds=self.settings.poll_seconds,
                                   id="poll-local", coalesce=True, max_instances=1,
                                   next_run_time=datetime.now(UTC))
        self.scheduler.start()

    def queue_reconcile(self) -> bool:
        """One reconcile per hour however many processes run: the hour is the delivery id."""
        hour = datetime.now(UTC).strftime("%Y%m%d%H")
        return self.queue.enqueue(NewDelivery(f"reconcile-{hour}", "perfbot.reconcile", None, None, None, "{}"))

    def queue_digest_check(self) -> bool:
        """One digest check per quarter hour however many processes run: the quarter is the delivery id."""
        now = datetime.now(UTC)
        quarter = f"{now:%Y%m%d%H}{now.minute // 15}"
        return self.queue.enqueue(NewDelivery(f"digest-{quarter}", "perfbot.digest", None, None, None, "{}"))

    def queue_actions_poll(self) -> bool:
        """One look at dispatched Actions runs per interval however many processes run: the bucket is the id."""
        now = datetime.now(UTC)
        bucket = f"{now:%Y%m%d%H}{now.minute // ACTIONS_POLL_MINUTES:02d}"
        return self.queue.enqueue(NewDelivery(f"actions-poll-{bucket}", "perfbot.actions-poll", None, None, None, "{}"))

    def queue_redelivery_check(self) -> bool:
        """One look at the App webhook's failed deliveries per interval however many processes run."""
        now = datetime.now(UTC)
        bucket = f"{now:%Y%m%d%H}{now.minute // redeliveries.INTERVAL_MINUTES:02d}"
        return self.queue.enqueue(NewDelivery(f"redeliveries-{bucket}", redeliveries.EVENT, None, None, None, "{}"))

    def poll_local_repo(self) -> bool:
        """Local mode: a new commit on the watched repository's branch acts as a push to it."""
        path = self.settings.local_repo
        if path is None:  # only local mode with a watched repository polls
            return False
        try:
            repo = GitRepository(path)
            ref = repo.default_ref()
            head = repo.resolve(ref)
            repo.close()
        except GitError as exc:
            log.warning("local repository %s: %s", path, exc)
            return False
        key = local_full_name(path)
        payload = {"ref": f"refs/heads/{ref}", "after": head, "local": True,
                   "repository": {"full_name": key, "default_branch": ref}}
        return self.queue.enqueue(NewDelivery(f"local-{head}", "push", None, key, None, json.dumps(payload)))

    def stop(self) -> None:
        """SIGTERM: the work in hand goes back to the queue at once (another worker claims it now, not after a
        lease), then the threads get a moment to notice; what they write after is fenced off."""
        self.stop_event.set()
        if self.scheduler.running:
            self.scheduler.shutdown(wait=False)
        returned = self.leases.hand_back()
        if returned:
            log.info("handed %d delivery(ies) back to the queue", returned)
        deadline = time.monotonic() + STOP_SECONDS
        for thread in self.threads:
            thread.join(timeout=max(deadline - time.monotonic(), 0.1))
        self.db.dispose()
