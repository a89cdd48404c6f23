"""The campaign dashboard as a pure function: facts in, every section out; and which of its task-list boxes a
person ticked, from the issue body before and after an edit."""
from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass
from datetime import date

from bot.core.config import Milestone
from bot.core.lead.campaign import Tally, tally
from bot.core.lead.facts import BisectFact, FixFact, RecordFact, RunFact
from bot.core.lead.milestones import MilestoneProgress
from bot.core.lead.notices import Notice
from bot.core.lead.standing import Standing, standings_of
from bot.core.verify import verdict_words as words
from bot.core.verify.vocabulary import Purpose, RunStatus, Test

MARKER = "<!-- perfbot:dashboard -->"
LABEL = "perfbot-dashboard"
# verb -> what the box says; each is carried out by the same services as the /perf command it names
VERBS = {"verify": "verify now", "rerun": "re-run the failed verification", "close": "close as not reproduced",
         "accept": "accept the merge PR"}
MERGE_BRANCH = "perfbot/merge-"  # dedup's merge branches: perfbot/merge-<the report that survives>
_BOX = re.compile(r"^\s*[-*+] \[([ xX])\] <!-- perfbot:action ([a-z]+) (perf_[a-z0-9_]+) -->", re.MULTILINE)
FAILED = (Test.FAIL, Test.INCONCLUSIVE, Test.IMPLAUSIBLE, Test.ERROR, Test.MISMATCH)


@dataclass(frozen=True)
class Action:
    verb: str
    slug: str

    @property
    def marker(self) -> str:
        return f"<!-- perfbot:action {self.verb} {self.slug} -->"


@dataclass(frozen=True)
class OpenReport:
    standing: Standing  # its figure, outcome and words: the same as every other view's
    issue: int | None
    in_flight: bool  # a bench run is queued or running: no "verify now" box

    @property
    def slug(self) -> str:
        return self.standing.slug


@dataclass(frozen=True)
class Group:
    track: str
    backend: str
    reports: tuple[OpenReport, ...]


@dataclass(frozen=True)
class MergePull:
    """An open merge PR of dedup or `/perf merge`: accepting it merges it, and the merge rule does the rest."""

    number: int
    keep: str  # the slug its branch is named after
    title: str


@dataclass(frozen=True)
class Decision:
    action: Action | None  # None: a blocker only a person can resolve (no box to tick)
    text: str


@dataclass(frozen=True)
class Dashboard:
    full_name: str
    groups: tuple[Group, ...]
    in_flight: tuple[RunFact, ...]
    waiting: tuple[FixFact, ...]  # open fixes no finished run has judged since they last moved
    milestones: tuple[MilestoneProgress, ...]
    decisions: tuple[Decision, ...]
    news: tuple[Notice, ...]
    tally: Tally | None = None


def build_dashboard(full_name: str, records: tuple[RecordFact, ...], runs: tuple[RunFact, ...],
                    fixes: tuple[FixFact, ...], issues: dict[str, int], milestones: tuple[MilestoneProgress, ...],
                    notices: tuple[Notice, ...], merges: tuple[MergePull, ...] = (),
                    bisections: tuple[BisectFact, ...] = ()) -> Dashboard:
    """`runs` in id order, any status; `notices` the unresolved ones."""
    standings = standings_of(records, runs, fixes, bisections)
    done_of = defaultdict(list)
    for run in runs:
        if run.status == RunStatus.DONE:
            done_of[run.slug].append(run)
    busy = {r.slug for r in runs if r.status in (RunStatus.QUEUED, RunStatus.RUNNING)}
    groups: dict[tuple[str, str], list[OpenReport]] = defaultdict(list)
    decisions: list[Decision] = []
    for record in records:
        if record.state not in ("open", "regressed"):  # a regressed report waits for a fix again
            continue
        groups[(record.track or "?", record.backend or "?")].append(OpenReport(
            standings[record.slug], issues.get(record.slug), record.slug in busy))
        last = done_of[record.slug][-1] if done_of[record.slug] else None
        if record.slug in busy or last is None:
            continue
        if last.claim_failed or record.reproduced == "not reproduced":
            decisions.append(Decision(Action("close", record.slug), f"`{record.slug}`: the claim did not reproduce "
                                      f"in bench run {last.id}; close it as not reproduced?"))
        elif last.purpose == Purpose.FIX and last.verdict in FAILED:
            decisions.append(Decision(Action("rerun", record.slug), f"`{record.slug}`: bench run {last.id} ended "
                                      f"{words.text(words.of_fix(last.verdict))}; run the verification again?"))
    for pull in merges:
        decisions.append(Decision(Action("accept", pull.keep), f"merge PR #{pull.number} into `{pull.keep}`: review "
                                  "the merged text, then accept it here or merge it on GitHub"))
    acted = {d.action.slug for d in decisions if d.action}
    for notice in notices:
        if notice.blocker:
            action = Action("rerun", notice.slug) if notice.kind == "fix-failed-twice" and notice.slug \
                and notice.slug not in acted and notice.slug not in busy else None
            decisions.append(Decision(action, f"**{notice.heading}**: {notice.text}"))
    judged = defaultdict(list)
    for run in runs:
        if run.status == RunStatus.DONE and run.purpose == Purpose.FIX:
            judged[run.slug].append(run.finished_at or run.created_at)
    waiting = tuple(f for f in fixes if f.state == "open" and not any(t >= f.updated_at for t in judged[f.slug]))
    return Dashboard(
        full_name,
        tuple(Group(t, b, tuple(sorted(rs, key=_rank))) for (t, b), rs in sorted(groups.items())),
        tuple(r for r in runs if r.status in (RunStatus.QUEUED, RunStatus.RUNNING)),
        waiting, milestones, tuple(decisions), tuple(n for n in notices if not n.blocker), tally(standings.values()))


def _rank(report: OpenReport) -> tuple:
    """Measured figures first, worst on top; a report without one is listed after them, never by its claim."""
    figure = report.standing.ranked_figure
    return figure is None, -(figure or 0), report.slug


def merge_pulls(pulls: list[dict]) -> tuple[MergePull, ...]:
    out = []
    for pull in pulls:
        keep = pull["head_ref"][len(MERGE_BRANCH):]
        if pull["head_ref"].startswith(MERGE_BRANCH) and re.fullmatch(r"perf_[a-z0-9_]+", keep):
            out.append(MergePull(pull["number"], keep, pull["title"]))
    return tuple(sorted(out, key=lambda p: p.number))


def boxes(body: str) -> dict[Action, bool]:
    """Every action box of a body and whether it is ticked."""
    return {Action(verb, slug): mark != " " for mark, verb, slug in _BOX.findall(body or "") if verb in VERBS}


def newly_ticked(before: str, after: str) -> list[Action]:
    """Boxes ticked in `after` that were not ticked (or not there) in `before`, in the order they appear."""
    old = boxes(before)
    return [action for action, ticked in boxes(after).items() if ticked and not old.get(action, False)]


def milestones_now(records: tuple[RecordFact, ...], runs: tuple[RunFact, ...], milestones: tuple[Milestone, ...],
                   seq_threshold: float, today: date) -> tuple[MilestoneProgress, ...]:
    """Each milestone's progress as the finished runs stand now (the digest's rules, without its window)."""
    from bot.core.lead.milestones import latest_suites, progress

    done = sorted((r for r in runs if r.status == RunStatus.DONE), key=lambda r: (r.finished_at or r.created_at, r.id))
    standings = standings_of(records, done)
    return tuple(progress(m, standings, latest_suites(done), seq_threshold, today) for m in milestones)
