"""The campaign dashboard issue of a repository, kept current, and the notices told on it once each.

Edited in place, never reposted: its number is kept in `dashboard_issues` with the hash of the body last
written, so an unchanged dashboard costs no write; after a lost database it is found again by its marker.
A notice's row is claimed before its comment is posted, and the comment is found by its own marker before
one is made, so a restart or a second worker never tells it twice. The outgoing webhook is a delivery of
its own (`perfbot.notify`), retried by the queue, never sent inline.
"""
from __future__ import annotations

import hashlib
import json
import logging
from datetime import datetime

from bot.adapters.git import GitRepository
from bot.adapters.store.bench import merge_store
from bot.adapters.store.engine import Database
from bot.adapters.store.lead import notice_store
from bot.adapters.store.lead.lead_queries import lead_facts
from bot.adapters.store.queue import NewDelivery
from bot.adapters.templates import render
from bot.core import refusals
from bot.core.config import PerfbotFile
from bot.core.config.instance import DEFAULT_OPERATOR, OperatorConfig
from bot.core.lead.dashboard import (
    LABEL,
    MARKER,
    MERGE_BRANCH,
    VERBS,
    Dashboard,
    build_dashboard,
    merge_pulls,
    milestones_now,
)
from bot.core.lead.notices import Notice, NoticeFacts, ReportState, current_notices
from bot.core.lead.wording import ratio_text, said
from bot.core.reports.parse import parse
from bot.core.tracker.issue_view import BOT_LABEL
from bot.core.tracker.untrusted import cell, code_cell, title_cell
from bot.errors import UserError
from bot.services.bench.bench_inputs import read_config

log = logging.getLogger("perfbot.dashboard")
TITLE = "perfbot campaign dashboard"
NOTIFY_EVENT = "perfbot.notify"


def notice_marker(kind: str, subject: str) -> str:
    """A subject never closes the comment early: '>' and '--' are written as entities."""
    safe = subject.replace("&", "&amp;").replace(">", "&gt;").replace("--", "&#45;&#45;")
    return f"<!-- perfbot:notice {kind} {safe} -->"


def render_dashboard(dashboard: Dashboard) -> str:
    return render("dashboard.md.j2", marker=MARKER, d=dashboard, verbs=VERBS, cell=cell, title=title_cell,
                  code=code_cell, ratio=ratio_text, said=lambda s: cell(said(s)))


class DashboardFlow:
    def __init__(self, db: Database, enqueue=None, operator: OperatorConfig = DEFAULT_OPERATOR) -> None:
        self.db = db
        self.enqueue = enqueue  # the delivery queue's enqueue; None: this process sends no webhooks
        self.operator = operator  # whose runners a notice names

    def config(self, repo: GitRepository) -> PerfbotFile:
        return self.operator.narrow(read_config(repo, repo.resolve(repo.default_ref())))

    def refresh(self, repo: GitRepository, tracker, full_name: str, now: datetime, *, force: bool = False) -> str:
        """created | updated | unchanged | off (no `[notify]` in `.perfbot.toml`, or the file does not parse)."""
        try:
            config = self.config(repo)
        except UserError as exc:  # lint and verification already say what is wrong with the file, with its line
            log.warning("%s: no dashboard while .perfbot.toml does not parse: %s", full_name, refusals.log_line(exc))
            return "off"
        if not config.notify.declared:
            return "off"
        facts, issues, texts = lead_facts(self.db, full_name, now)
        milestones = milestones_now(facts.records, facts.runs, config.milestones, config.verify.seq_threshold,
                                    now.date())
        notices = current_notices(NoticeFacts(
            tuple(_report_state(r, {t.slug: t for t in texts}.get(r.slug)) for r in facts.records),
            facts.runs, frozenset(f.slug for f in facts.fixes if f.state == "merged"), milestones,
            config.notify.stuck_days, config.notify.host_hours,
            {r.slug: runner.name for r in facts.records if (runner := config.runner_for(r.backend or "c"))}), now, cell)
        merges = merge_pulls(tracker.open_pulls_from(MERGE_BRANCH))
        merge_store.set_open(self.db, full_name, [(m.number, m.keep, m.title) for m in merges])
        body = render_dashboard(build_dashboard(full_name, facts.records, facts.runs, facts.fixes, issues, milestones,
                                                notices, merges, facts.bisections))
        wanted = hashlib.sha256(body.encode()).hexdigest()
        row = notice_store.dashboard_row(self.db, full_name)
        outcome = "unchanged"
        if row is None:
            number = tracker.marked_issues(prefix=MARKER, label=LABEL).get(MARKER)
            tracker.ensure_labels((BOT_LABEL, LABEL))
            if number is None:
                number = tracker.create_issue(TITLE, body, (BOT_LABEL, LABEL))
                outcome = "created"
            else:
                self._write(tracker, number, body)
                outcome = "updated"
            notice_store.save_dashboard(self.db, full_name, number, wanted, now)  # saved at once: found by its row
        else:
            number = row[0]
            if force or row[1] != wanted:
                self._write(tracker, number, body)
                notice_store.save_dashboard(self.db, full_name, number, wanted, now)
                outcome = "updated"
        self._tell(tracker, full_name, number, config, notices, now)
        return outcome

    def _write(self, tracker, number: int, body: str) -> None:
        tracker.update_issue(number, title=TITLE, body=body, labels=(BOT_LABEL, LABEL), state="open",
                             state_reason=None)

    def _tell(self, tracker, full_name: str, number: int, config: PerfbotFile, notices: tuple[Notice, ...],
              now: datetime) -> None:
        by_key = {(n.kind, n.subject): n for n in notices}
        for pending in notice_store.settle_notices(self.db, full_name, [(n.kind, n.subject, n.text) for n in notices],
                                                   now):
            notice = by_key.get((pending.kind, pending.subject))
            if notice is None:
                continue
            if pending.comment_id is None:
                marker = notice_marker(notice.kind, notice.subject)
                body = render("notice_comment.md.j2", marker=marker, notice=notice,
                              mentions=config.notify.mentions)
                comment_id = tracker.upsert_comment(number, marker, body, None)
                notice_store.set_posted(self.db, pending.id, comment_id)
                log.info("%s: notice %s %r posted on #%d", full_name, notice.kind, notice.subject, number)
            if not pending.webhook_queued:
                if config.notify.webhook_url and self.enqueue is not None:
                    payload = {"url": config.notify.webhook_url, "notice": {
                        "repository": full_name, "kind": notice.kind, "subject": notice.subject,
                        "blocker": notice.blocker, "heading": notice.heading, "text": notice.text,
                        "dashboard_issue": number}}
                    self.enqueue(NewDelivery(f"notify-{pending.id}-{hashlib.sha256(full_name.encode()).hexdigest()[:12]}",
                                             NOTIFY_EVENT, None, full_name, None, json.dumps(payload)))
                notice_store.set_webhook_queued(self.db, pending.id)  # queued, or no webhook wanted


def _report_state(record, text) -> ReportState:
    return ReportState(record.slug, record.state, record.created_at, _root_cause_known(text),
                       text.errors if text else 0, text.supersedes if text else ())


def _root_cause_known(text) -> bool:
    if text is None:
        return True  # no text to judge (not open): nothing is stuck
    parsed = parse(text.path, text.content.encode("utf-8")).record
    section = parsed.section("root_cause") if parsed else None
    return section is not None and bool(section.text.strip()) and not section.is_unknown
