"""BotServices' parity guard: a PR's Metal/CUDA twins checked on every push to it, local branches on every sync."""
from __future__ import annotations

from bot.adapters.git import GitRepository
from bot.adapters.store import service_queries as queries
from bot.core.parity.check import ParityReport
from bot.services.bench.fix_flow import PullInfo
from bot.services.lead.parity_flow import ParityFlow


class ParityWork:
    """Mixed into BotServices: uses its db, trackers and source."""

    def pull_request_parity(self, full_name: str, pull: PullInfo, installation_id: int | None) -> ParityReport | None:
        installation_id = installation_id or queries.installation_for(self.db, full_name)
        tracker = self.trackers(full_name, installation_id)
        with self.source.open(full_name, installation_id) as repo:
            return ParityFlow().pull_changed(repo, tracker, full_name, pull)

    def _branches_parity(self, repo: GitRepository, tracker, full_name: str) -> None:
        if self.source.is_local(full_name):  # on GitHub the pull requests carry the check runs
            ParityFlow().branches_changed(repo, tracker, full_name)
