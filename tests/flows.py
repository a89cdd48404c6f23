"""Test shortcuts for whole flows: sync a builder's repository into a store, then mirror what it touched."""
from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from bot.adapters.git import GitRepository
from bot.services.reports.mirror import MirrorSummary, mirror_repo
from bot.services.reports.sync import sync


def pending_merges(database) -> list[tuple]:
    """The merge PRs the store holds as open: (number, keep, merged_from, opened_by)."""
    from sqlalchemy import select

    from bot.adapters.store.service_models import PendingMerge
    with database.session() as session:
        return [tuple(row) for row in session.execute(select(PendingMerge.number, PendingMerge.keep,
                                                             PendingMerge.merged_from, PendingMerge.opened_by))]


def sync_and_mirror(database, builder, tracker, key: str) -> MirrorSummary:
    repo = GitRepository(builder.root, full_name=key)
    try:
        summary = sync(database, repo)
    finally:
        repo.close()
    return mirror_repo(database, tracker, key, summary.touched)


@contextmanager
def github_bot(github, database, tmp_path, instance: str = "") -> Iterator[tuple]:
    """perfbot against the GitHub double, repositories fetched from `tmp_path/remotes`, fixes verified on a
    local runner, and a worker for the queue: yields (services, worker, queue). `instance`: the operator's
    instance file (its runners, sandbox and ceilings)."""
    import handlers
    from bot.adapters.clones import Clones
    from bot.adapters.github.client import GitHubClients
    from bot.adapters.github.issues import GitHubIssues
    from bot.adapters.runners.local import LocalRunner
    from bot.adapters.store.queue import DeliveryQueue
    from bot.config import Settings
    from bot.core.config.instance import parse_instance_config
    from bot.services.bench.bench_flow import BenchFlow
    from bot.services.bench.fix_flow import FixFlow
    from bot.services.usecases import BotServices, RepoSource
    from bot.services.worker import Worker

    github.use_git_remotes(tmp_path / "remotes")
    operator = parse_instance_config(instance)[1]
    settings = Settings(instance_dir=tmp_path, database_url=database.url, github_token=github.token,
                        github_api_url=github.url, github_request_interval=0, github_write_interval=0,
                        operator=operator)
    clients = GitHubClients(settings)
    clones = Clones(tmp_path / "clones", f"file://{tmp_path / 'remotes'}")
    queue = DeliveryQueue(database)
    services = BotServices(
        database, lambda name, _inst: GitHubIssues(clients.for_installation(None), name, clients.own_login),
        RepoSource(fetch=lambda name, _inst: clones.fetch(name), push=lambda name, _inst, branch: clones.push(name,
                                                                                                              branch)),
        bot_login="perfbot[bot]", own_login=clients.own_login, fixes=FixFlow(database, queue.enqueue),
        bench=BenchFlow(database, lambda conf, path, config: LocalRunner(
            conf.name, path, tmp_path / "bench", build=config.build.argv, memory_mb=config.verify.memory_mb),
            comment_every=0, operator=operator))
    worker = Worker(queue, lambda event: handlers.dispatch(event, services), owner="test", lease_seconds=60,
                    max_attempts=2)
    try:
        yield services, worker, queue
    finally:
        clients.close()


def local_bot(database, repo_root, tmp_path, lease_seconds: int = 60) -> tuple:
    """perfbot in local mode over one repository: issues as files, fixes verified on a local runner, and a
    worker for the queue: returns (key, queue, tracker, services, worker)."""
    import handlers
    from bot.adapters.git import local_full_name
    from bot.adapters.local_issues import FileIssues
    from bot.adapters.runners.local import LocalRunner
    from bot.adapters.store.queue import DeliveryQueue
    from bot.services.bench.bench_flow import BenchFlow
    from bot.services.bench.fix_flow import FixFlow
    from bot.services.usecases import BotServices, RepoSource
    from bot.services.worker import Worker

    key = local_full_name(repo_root)
    queue = DeliveryQueue(database)
    tracker = FileIssues(tmp_path / "issues")

    def runner(conf, repo_path, config):
        return LocalRunner(conf.name, repo_path, tmp_path / "bench", build=config.build.argv,
                           memory_mb=config.verify.memory_mb)

    services = BotServices(database, lambda _name, _inst: tracker, RepoSource(local={key: repo_root}),
                           bot_login="perfbot", fixes=FixFlow(database, queue.enqueue),
                           bench=BenchFlow(database, runner, comment_every=0))
    worker = Worker(queue, lambda event: handlers.dispatch(event, services), owner="test",
                    lease_seconds=lease_seconds, max_attempts=2)
    return key, queue, tracker, services, worker
