"""The weekly digest of one repository: its window, its facts from the store, and its markdown from the template."""
from __future__ import annotations

import re
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

from bot.adapters.store.engine import Database
from bot.adapters.store.lead.facts_queries import campaign_facts
from bot.adapters.templates import render
from bot.core.config import PerfbotFile
from bot.core.lead import wording
from bot.core.tracker.untrusted import cell, code_cell, title_cell
from bot.digest.model import STALE_AFTER, Digest, build_digest
from bot.parity.check import ParityReport
from bot.parity.view import digest_rows

TOP_OPEN = 25  # the ranking is a prompt for the week, not an inventory; the dashboard lists every report
# Backslash-escaping ASCII punctuation is always literal in GitHub markdown: no links, emphasis, HTML or math.


def make_digest(db: Database, full_name: str, config: PerfbotFile, *, since: datetime | None,
                now: datetime, parity: ParityReport | None = None) -> tuple[Digest, str]:
    """The digest of since..now (default: the [digest] window_days before now), dated in the digest's time zone."""
    if now.tzinfo is None or (since is not None and since.tzinfo is None):
        raise ValueError("make_digest needs aware datetimes")
    zone = ZoneInfo(config.digest.timezone)
    end = now.astimezone(zone)
    start = (since or now - timedelta(days=config.digest.window_days)).astimezone(zone)
    digest = build_digest(campaign_facts(db, full_name, start, end), start, end, config.milestones,
                          config.verify.seq_threshold)
    return digest, render_digest(digest, parity)


def marker(full_name: str, week: str) -> str:
    """The hidden first line that finds this digest again; a repository key never closes the comment early."""
    return f"<!-- perfbot:digest {full_name.replace('>', '&gt;')} {week} -->"


def render_digest(digest: Digest, parity: ParityReport | None = None) -> str:
    """`parity`: the guard's report on the default branch as it stands; None when `[parity]` is not declared."""
    zone = digest.window_end.tzinfo
    charted = [(i, m) for i, m in enumerate(digest.milestones, 1) if m.fraction is not None]
    top_ratio = max([v for f in digest.merged_fixes for v in (f.before, f.after) if v is not None], default=1.0) * 1.15
    return render("digest.md.j2", d=digest, marker=marker(digest.full_name, digest.week), zone=str(zone),
                  cell=cell, title=title_cell, code=code_cell, label=mermaid_label, ratio=ratio, t=digest.tally,
                  said=lambda s: cell(wording.said(s)), headline=lambda s: cell(wording.headline(s)),
                  measured=wording.measured_cell, claimed=wording.claim_cell, interval=wording.interval_text,
                  measure=wording.measure_words,
                  yes_no=lambda v: "not known" if v is None else "yes" if v else "no",
                  when=lambda t: t.astimezone(zone).strftime("%Y-%m-%d %H:%M"),
                  top=TOP_OPEN, stale_days=STALE_AFTER.days, charted=charted, top_ratio=top_ratio,
                  parity=parity, parity_rows=digest_rows(parity) if parity else [], prose=prose)


def prose(text: str) -> str:
    """A message of perfbot's own holding `code spans` of names from the repository, in a table cell."""
    parts = re.split(r"(`[^`]+`)", " ".join(str(text).split()))
    return "".join(code_cell(p[1:-1]) if p.startswith("`") and p.endswith("`") and len(p) > 1 else
                   (" " if p[:1] == " " else "") + cell(p) + (" " if p[-1:] == " " and p.strip() else "")
                   for p in parts)


def mermaid_label(text: str) -> str:
    """Mermaid has no escaping worth trusting: only [a-z0-9_] reaches a chart."""
    return re.sub(r"[^a-z0-9_]", "_", str(text).lower())[:40] or "_"


def ratio(value: float | None) -> str:
    return wording.ratio_text(value)
