"""The merged report a reviewer proposes: both reports in one, inside the format's prose budget.

A mechanical merge that keeps every word of both reports was over the 500-word budget for long pairs, so the
merge people were handed failed lint. Here the old report's material is cut in steps until the prose fits:
first its prose around code and tables (its programs and rows stay: code and tables are free), then its
root cause and fix to their first sentence, then the new report's context to its first two sentences.
"""
from __future__ import annotations

import re

from bot.core.reports.parse import parse
from bot.core.reports.records import REPORT_DIR, PerfIssue

WORD_BUDGET = 500
SECTIONS = (("context", "Context"), ("reproduction", "Reproduction"), ("measurements", "Measurements"),
            ("root_cause", "Root cause"), ("fix", "Fix"))
_FENCE = re.compile(r"^\s*(```|~~~)")
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z`(])")


def merge_reports(new: PerfIssue, old: PerfIssue, budget: int = WORD_BUDGET) -> str:
    """One report covering both: the new one's facts and sections first, every reproduction of both kept, cut
    until its prose is within `budget` words (or as short as the cuts make it)."""
    merged = ""
    for level in range(4):
        merged = _merge(new, old, level)
        record = parse(f"{REPORT_DIR}/{new.slug}.md", merged.encode()).record
        if record is None or record.prose_words <= budget:
            break
    return merged


def _merge(new: PerfIssue, old: PerfIssue, level: int) -> str:
    supersedes = [s for s in dict.fromkeys([old.slug, *old.supersedes, *new.supersedes]) if s != new.slug]
    fix = new.fix if new.fix not in (None, "unknown") else (old.fix or "unknown")
    front = [f"track: {new.track or old.track}", f"backend: {new.backend or old.backend or 'c'}"]
    if new.threads:
        front.append(f"threads: {new.threads}")
    if new.ratio is not None:
        front.append(f"ratio: {new.ratio:g}")
    front += [f"fix: {fix}", f"supersedes: [{', '.join(supersedes)}]"]
    parts = ["---", *front, "---", f"# {new.title or old.title}", ""]
    for name, heading in SECTIONS:
        mine, theirs = _text(new, name), _text(old, name)
        if name == "context" and level >= 3:
            mine = " ".join(_SENTENCE.split(mine)[:2])
        parts += [f"## {heading}", "", mine or "unknown", ""]
        if not theirs or theirs == mine or (name in ("root_cause", "fix") and theirs.lower().startswith("unknown")):
            continue
        if level >= 1 and name in ("context", "reproduction", "measurements"):
            theirs = _code_and_tables(theirs)  # the old report's programs and rows, without the prose around
        elif level >= 2 and name in ("root_cause", "fix"):
            theirs = _SENTENCE.split(theirs)[0]
        if theirs:
            parts += [f"From `{old.slug}`, which this report supersedes:", "", theirs, ""]
    return "\n".join(parts).rstrip() + "\n"


def _code_and_tables(text: str) -> str:
    kept, inside = [], False
    for line in text.splitlines():
        fence = bool(_FENCE.match(line))
        if inside or fence or line.lstrip().startswith("|"):
            kept.append(line)
        elif kept and kept[-1] != "":
            kept.append("")
        if fence:
            inside = not inside
    return "\n".join(kept).strip()


def _text(record: PerfIssue, name: str) -> str:
    section = record.section(name)
    return section.text.strip() if section else ""
