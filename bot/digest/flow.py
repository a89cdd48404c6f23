"""Delivering the weekly digest: due by `[digest] schedule`, posted once per week as an issue with the digest
label and kept in the store; previewed by `perfbot digest --dry-run` and `/perf digest`.

Exactly once: the week's row in `digests` is claimed before anything is posted, and the issue is found by
its marker before one is made, so a restart, a second worker or a retry after a crash neither skips a week
(the hourly check catches up on start) nor posts it twice.
"""
from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import datetime
from zoneinfo import ZoneInfo

from bot.adapters.git import GitRepository
from bot.adapters.schedule import last_due
from bot.adapters.store.engine import Database
from bot.core.config import PerfbotFile
from bot.core.tracker.issue_view import BOT_LABEL
from bot.digest import store as digest_store
from bot.digest.model import week_of
from bot.digest.render import make_digest, marker
from bot.errors import TransientError
from bot.parity.check import ParityReport
from bot.parity.flow import ParityFlow
from bot.services.bench.bench_inputs import read_config

log = logging.getLogger("perfbot.digest")


def summary_of(digest) -> dict:
    """The numbers the dashboard shows beside a posted digest."""
    t = digest.tally
    return {"open": t.live if t else 0, "overstated": t.overstated if t else 0,
            "with_a_culprit": t.culprits if t else 0, "waiting_for_merge": t.waiting_merge if t else 0,
            "fixed_in_main": t.fixed_in_main if t else 0, "not_ranked": t.apart if t else 0,
            "new": len(digest.new_reports), "duplicates": len(digest.duplicates), "stale": len(digest.stale),
            "milestones": [{"name": m.name, "done": m.done, "total": m.total, "met": m.met}
                           for m in digest.milestones]}


class DigestFlow:
    def __init__(self, db: Database) -> None:
        self.db = db

    def config(self, repo: GitRepository) -> PerfbotFile:
        return read_config(repo, repo.resolve(repo.default_ref()))

    def preview(self, repo: GitRepository, full_name: str, now: datetime, since: datetime | None = None) -> str:
        _, body = make_digest(self.db, full_name, self.config(repo), since=since, now=now,
                              parity=ParityFlow().default_branch(repo, full_name))
        return body

    def post_if_due(self, repo: GitRepository, tracker, full_name: str, now: datetime) -> dict | None:
        """The digest of the latest scheduled week, if `[digest]` asks for one and it is not posted yet."""
        config = self.config(repo)
        if not config.digest.declared:
            return None  # no [digest] section: the feature is off for this repository
        due = last_due(config.digest.schedule, config.digest.timezone, now)
        if due is None:  # a schedule that never fires has nothing due
            return None
        return self.post(tracker, full_name, config, due, parity=lambda: ParityFlow().default_branch(repo, full_name))

    def post(self, tracker, full_name: str, config: PerfbotFile, end: datetime,
             since: datetime | None = None,
             parity: Callable[[], ParityReport | None] = lambda: None) -> dict | None:
        """Post the digest of the window ending at `end`; None when that week's was posted already.

        `parity` is asked only when the week's digest is written (the due check runs every quarter hour)."""
        week = week_of(end.astimezone(ZoneInfo(config.digest.timezone)))
        stored = digest_store.week_digest(self.db, full_name, week)
        if stored is not None and stored["issue"] is not None:
            return None
        if stored is None:
            digest, body = make_digest(self.db, full_name, config, since=since, now=end, parity=parity())
            stored = digest_store.claim_week(self.db, full_name, digest.week, digest.window_start, digest.window_end,
                                             body, summary_of(digest)) or digest_store.week_digest(self.db, full_name,
                                                                                                   week)
        if stored is None:  # another process claimed the week and its row is gone again
            raise TransientError(f"{full_name}: the digest of {week} was claimed but is not stored; trying again")
        label = config.digest.label
        mark = marker(full_name, stored["week"])
        number = tracker.marked_issues(prefix=mark, label=label).get(mark)
        if number is None:
            tracker.ensure_labels((BOT_LABEL, label))
            number = tracker.create_issue(f"perfbot digest {stored['week']}", stored["body"], (BOT_LABEL, label))
        digest_store.set_issue(self.db, stored["id"], number)
        log.info("%s: digest %s posted as #%d", full_name, stored["week"], number)
        return digest_store.stored_digest(self.db, stored["id"])
