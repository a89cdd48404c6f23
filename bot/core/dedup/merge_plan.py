"""What the delete-and-merge rule asks of a draft that overlaps existing reports, as steps an agent can take.

devs/ISSUE_FORMAT.md, "Delete and merge": one problem, one file. The old files are deleted and, in the same
commit, one report covering all of them is written, naming every old slug in `supersedes`.
"""
from __future__ import annotations

from dataclasses import dataclass

from bot.core.reports.records import REPORT_DIR, PerfIssue


@dataclass(frozen=True)
class MergePlan:
    delete: tuple[str, ...]     # files to delete, in the commit that adds `write`
    write: str                  # the one report that replaces them
    supersedes: tuple[str, ...]
    must_cover: tuple[str, ...]  # what the merged report must still say, one item per fact it would lose

    def as_dict(self) -> dict:
        return {"delete": list(self.delete), "write": self.write, "supersedes": list(self.supersedes),
                "must_cover": list(self.must_cover)}


def merge_plan(draft: PerfIssue, overlapping: list[PerfIssue]) -> MergePlan:
    """The files the merge rule deletes for `draft`, the file it writes, and what each old report brings that
    the merged one must keep: its program, its measurements, its root cause and its fix."""
    olds = [old for old in overlapping if old.slug != draft.slug]
    supersedes = tuple(dict.fromkeys(s for old in olds for s in (old.slug, *old.supersedes) if s != draft.slug))
    cover: list[str] = []
    for old in olds:
        cover.append(f"`{old.slug}`'s reproduction: its program and C translation, or a sentence on why the "
                     "draft's program is the same case")
        if _has(old, "measurements"):
            cover.append(f"`{old.slug}`'s measurements ({_machine(old)}): keep its rows or say why they are "
                         "superseded")
        if _has(old, "root_cause"):
            cover.append(f"`{old.slug}`'s root cause, where it adds to the draft's")
        if old.fix not in (None, "unknown") and draft.fix in (None, "unknown"):
            cover.append(f"`{old.slug}`'s fix (`fix: {old.fix}`): the draft has none, so the merged report "
                         "takes it")
    cover.append(f"front matter `supersedes: [{', '.join(supersedes)}]`")
    cover.append("at most 500 words of prose (code and tables are free)")
    return MergePlan(tuple(f"{REPORT_DIR}/{old.slug}.md" for old in olds), f"{REPORT_DIR}/{draft.slug}.md",
                     supersedes, tuple(cover))


def _has(record: PerfIssue, name: str) -> bool:
    section = record.section(name)
    return section is not None and not section.is_unknown and bool(section.text.strip())


def _machine(record: PerfIssue) -> str:
    return f"on {record.host}" if record.host else "its table"
