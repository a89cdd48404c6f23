"""The offline reviewer: deterministic thresholds on retrieval scores and a mechanically merged report."""
from __future__ import annotations

import re

from bot.core.dedup.confidence import PairFeatures, overlap_probability
from bot.core.dedup.mechanisms import EVERYDAY, relation
from bot.core.dedup.merge_text import merge_reports
from bot.core.dedup.reasons import apart_reason, as_written, shape_reason, shared_places_reason, shared_words_reason
from bot.core.dedup.retrieval import Candidate
from bot.core.dedup.similarity import CauseProfile, cause_profile, jaccard, overlap
from bot.core.dedup.verdicts import Verdict
from bot.core.lint.audit import AuditResult, offline_audit
from bot.core.lint.rules import lint
from bot.core.reports.codeblocks import LANGUAGE_TAGS
from bot.core.reports.parse import parse
from bot.core.reports.records import REPORT_DIR, PerfIssue, ReadingOptions

NAME = "offline"
# Chosen on tests/data/dedup and tests/data/dedup_tune with bench/dedup_eval.py, never on
# tests/data/dedup_heldout. Precision is favoured over recall: an overlap verdict opens a merge PR.
DUPLICATE = {"text": 0.5, "shape": 0.5, "score": 0.5}
# When both root causes name places (functions, not files): they must blame mostly the same ones...
SAME_PLACES = 0.5
# ...and then either describe the mechanism in enough of the same words, or look alike to retrieval.
CAUSE_WORDS = 0.2
SCORE_WITH_PLACES = 0.25
# When a root cause names no place, the retrieval scores decide, as before the places were read.
OVERLAPS = {"score": 0.2}
TEXT_OR = 0.2  # ...and either this much text similarity
LOC_OR = 0.3   # ...or more than this much of the same root-cause places
# Across tracks or backends, root causes that name no common place must share this much of their words.
MECHANISM_WORDS = 0.4


def review(new: PerfIssue, old: PerfIssue, scores: Candidate) -> Verdict:
    """Judge a pair by what the two root causes blame, falling back to retrieval's scores when one names nothing;
    a pair across tracks or backends must share the mechanism as well as a program. The confidence is the
    calibrated probability of the verdict given (core/dedup/confidence.py)."""
    new_cause, old_cause = cause_profile(new), cause_profile(old)
    kind, judged = _judge(new_cause, old_cause, scores, _backend(new) == _backend(old),
                          (_cause_text(new), _cause_text(old)))
    if relation(new_cause.mechanisms, old_cause.mechanisms) == "apart":
        judged.append(apart_reason(new, old, new_cause.mechanisms, old_cause.mechanisms))
    kind, judged = _across_claims(new, old, new_cause, old_cause, kind, judged)
    likely = overlap_probability(pair_features(new, old, scores, new_cause, old_cause))
    reasons = [shared_words_reason(new, old, scores), shape_reason(scores)]
    blamed = new_cause.mechanisms & old_cause.mechanisms
    reasons += [r for r in (shared_places_reason(new, old, blamed),) if r] + judged
    if kind == "distinct":
        return Verdict(kind, round(1 - likely, 3), tuple(reasons), None, NAME)
    merged = merge_reports(new, old)
    target = f"{REPORT_DIR}/{new.slug}.md"  # where the merged report will live, whatever the draft was called
    reading = merged_reading(new, old)
    found = lint(parse(target, merged.encode(), reading), path=target, reading=reading)
    problems = tuple(f"line {f.line}: [{f.rule}] {f.message}" for f in found if f.is_error)
    return Verdict(kind, round(likely, 3), tuple(reasons), merged, NAME, merge_problems=problems)


def pair_features(new: PerfIssue, old: PerfIssue, scores: Candidate, new_cause: CauseProfile | None = None,
                  old_cause: CauseProfile | None = None) -> PairFeatures:
    new_cause, old_cause = new_cause or cause_profile(new), old_cause or cause_profile(old)
    both = bool(new_cause.places and old_cause.places)
    return PairFeatures(scores.text, scores.shape, scores.locations,
                        overlap(new_cause.places, old_cause.places) if both else 0.0,
                        jaccard(new_cause.words, old_cause.words), 0.0 if both else 1.0,
                        jaccard(new_cause.mechanisms, old_cause.mechanisms),
                        float(relation(new_cause.mechanisms, old_cause.mechanisms) == "apart"),
                        min(2, len(new_cause.mechanisms & old_cause.mechanisms - EVERYDAY)) / 2)


def _judge(new: CauseProfile, old: CauseProfile, scores: Candidate, same_code: bool,
           texts: tuple[str, str]) -> tuple[str, list[str]]:
    """`same_code`: both reports run one backend's code, so the functions they name can be compared; `texts`, the
    two root causes, to name places as the first wrote them."""
    values = {"text": scores.text, "shape": scores.shape, "score": scores.score, "locations": scores.locations}
    reasons: list[str] = []
    mechanism = relation(new.mechanisms, old.mechanisms)
    if mechanism == "apart":  # one kernel or one function, but a different bottleneck in each
        if new.places and old.places:
            reasons.append(_places_reason(new, old, overlap(new.places, old.places), jaccard(new.words, old.words),
                                          texts[0]))
        return "distinct", reasons  # review() says which mechanisms, in each report's words
    duplicate = all(values[k] >= v for k, v in DUPLICATE.items())
    if new.places and old.places:
        places, words = overlap(new.places, old.places), jaccard(new.words, old.words)
        reasons.append(_places_reason(new, old, places, words, texts[0]))
        if places >= SAME_PLACES and (words >= CAUSE_WORDS or scores.score >= SCORE_WITH_PLACES or mechanism == "same"):
            return ("duplicate" if duplicate else "overlaps"), reasons
        if mechanism != "same" or same_code:  # one backend's code: other functions are another cause
            return "distinct", reasons
        return "overlaps", [*reasons, "other places in other backends' code, but the same mechanism in both "
                                      "root causes: " + ", ".join(sorted(new.mechanisms & old.mechanisms))]
    if mechanism == "same":
        return ("duplicate" if duplicate else "overlaps"), [*reasons, "a root cause names no place, but both "
                                                            "describe the same mechanism: "
                                                            + ", ".join(sorted(new.mechanisms & old.mechanisms))]
    reasons.append(f"a root cause names no place to compare: judged on retrieval's scores (score {scores.score:.2f})")
    if duplicate:
        return "duplicate", reasons
    if all(values[k] >= v for k, v in OVERLAPS.items()) and (scores.locations > LOC_OR or scores.text >= TEXT_OR):
        return "overlaps", reasons
    return "distinct", reasons


def _across_claims(new: PerfIssue, old: PerfIssue, new_cause: CauseProfile, old_cause: CauseProfile, kind: str,
                   reasons: list[str]) -> tuple[str, list[str]]:
    """A SEQ report and a Metal one about the same program are different claims, unless one mechanism explains
    both (the same allocator, the same copy): then they still overlap, and the reasons say which."""
    claims = [(r.track or "?", _backend(r)) for r in (new, old)]
    mechanism = _mechanism(new_cause, old_cause, _cause_text(new), _cause_text(old))
    if claims[0] == claims[1]:
        return kind, reasons + ([f"root-cause mechanism: {mechanism}"] if mechanism and kind != "distinct" else [])
    apart = " vs ".join(f"{track}/{backend}" for track, backend in claims)
    if mechanism and kind == "distinct":  # already told apart by what they blame
        return kind, [*reasons, f"different track or backend ({apart})"]
    if mechanism:
        return kind, [*reasons, f"different track or backend ({apart}), but the same root-cause mechanism: "
                                f"{mechanism}"]
    return "distinct", [*reasons, f"different track or backend ({apart}) and no shared root-cause mechanism: "
                                  "a shared program is not a shared cause"]


def _backend(record: PerfIssue) -> str:
    """The runtime code a report ran: a SEQ report and a PAR one on the C backend run the same C runtime."""
    return "c" if record.track == "seq" else (record.backend or "c")


def _cause_text(record: PerfIssue) -> str:
    section = record.section("root_cause")
    return section.text if section else ""


def _mechanism(new: CauseProfile, old: CauseProfile, new_text: str, old_text: str) -> str:
    """What the two root causes share, in their own terms: the places both blame and the words both use;
    '' when they do not describe one mechanism."""
    places, words = sorted(new.places & old.places), sorted(new.words & old.words)
    same = ((new.places and old.places and overlap(new.places, old.places) >= SAME_PLACES
             and jaccard(new.words, old.words) >= CAUSE_WORDS) or jaccard(new.words, old.words) >= MECHANISM_WORDS
            or relation(new.mechanisms, old.mechanisms) == "same")
    if not same:
        return ""
    named = ", ".join(f"`{p}`" for p in places[:4])
    written = ", ".join(as_written(words, new_text, old_text)[:6])
    return "; ".join(part for part in (f"places {named}" if named else "", f"words {written}" if written else "")
                     if part)


def _places_reason(new: CauseProfile, old: CauseProfile, places: float, words: float, text: str) -> str:
    """"both root causes blame heap_alloc, in heap.c" in words a person reads, then the two figures; each place
    spelled as `text` (the first root cause) wrote it."""
    shared, files = sorted(new.places & old.places), sorted(new.files & old.files)
    shared = [found.group(0) if (found := re.search(rf"\b{re.escape(p)}\b", text, re.I)) else p for p in shared]
    blamed = (f"both root causes blame {', '.join(shared)}" if shared
              else "the root causes blame no place in common")
    where = f", in {', '.join(files)}" if shared and files else ""
    return (f"{blamed}{where} (place overlap {places:.2f} of the shorter list, mechanism words {words:.2f}; "
            "places a report rules out are not counted)")


def merged_reading(new: PerfIssue, old: PerfIssue) -> ReadingOptions:
    """A merged report is read as its two sources were: a program they read under the repository's own fence tag
    (`[run] fence`) is still the program in the merge, which carries its blocks as they were written."""
    tags = (b.tag for r in (new, old) for b in r.code_blocks if b.lang == "language" and b.tag)
    return ReadingOptions(language_tags=tuple(dict.fromkeys(t for t in tags if t not in LANGUAGE_TAGS)))


class OfflineReviewer:
    """The embedded default reviewer: no API key, no network, the same verdict every time."""

    name = NAME

    def review(self, new: PerfIssue, old: PerfIssue, scores: Candidate) -> Verdict:
        return review(new, old, scores)

    def audit(self, record: PerfIssue, path: str) -> AuditResult:
        return offline_audit(record, path)
