"""The checks behind each lint rule: small functions from a record to the problems they see."""
from __future__ import annotations

import difflib
import re
from collections.abc import Iterator
from dataclasses import dataclass

from bot.core.reports.codeblocks import LANGUAGE_TAGS, undeclared_tag
from bot.core.reports.frontmatter import shown
from bot.core.reports.records import REPORT_DIR, SEQ_TOLERANCE, PerfIssue, ReadingOptions
from bot.core.reports.table_ratios import RowPair, closest, every_pair, in_measure
from bot.core.tracker.refnames import COMMIT_SHA, branch_name_problem, protected_branch, suggest_branch_name

RATIO_TOLERANCE = 0.10  # stated vs table ratio: more than 10% apart means one of them is wrong
_REPORT_NAME = re.compile(r"perf_[a-z0-9_]+\.md")
# Names perfbot once kept in the checkout (run folders, build marks). It keeps them outside now and ignores a
# committed one; committing one is how a link to a host file was planted, so lint names it.
RESERVED_NAMES = (".perfbot-run", ".perfbot-recipe", ".perfbot-built")
RESERVED_SHOWN = 20  # a tree's reserved paths kept for its reports' lint: a count, then "or more"


@dataclass(frozen=True)
class LintContext:
    path: str
    known_slugs: frozenset[str] | None
    word_budget: int
    reading: ReadingOptions = ReadingOptions()  # the repository's: [verify] reference_factor, [run] fence


@dataclass(frozen=True)
class Problem:
    """What a check found; the linter adds the rule id, severity and file."""

    line: int
    message: str
    remedy: str


def file_name(record: PerfIssue | None, context: LintContext) -> Iterator[Problem]:
    name = context.path.replace("\\", "/").rpartition("/")[2]
    if not _REPORT_NAME.fullmatch(name):
        yield Problem(1, f"file name '{shown(name)}' is not perf_[a-z0-9_]+.md",
                      f"name the file {_slugify(name)}.md (and place it at {REPORT_DIR}/{_slugify(name)}.md)")


def reserved_name(record: PerfIssue | None, context: LintContext) -> Iterator[Problem]:
    """A path through a name perfbot reserves: perfbot never reads it, so whatever it holds does nothing."""
    yield from reserved_in(context.path)


def reserved_in(path: str) -> Iterator[Problem]:
    """The problem with a repository path (a report's, or any file of a tree) that uses a reserved name."""
    parts = path.replace("\\", "/").split("/")
    for name in RESERVED_NAMES:
        if name in parts:
            where = "/".join(parts[:parts.index(name) + 1])
            yield Problem(1, f"'{shown(path, 120)}' lies in {name}, a name perfbot reserves: it keeps its run "
                          "folders and build marks outside the checkout and ignores a committed one",
                          f"remove it from the repository (git rm -r --cached '{shown(where, 120)}') and add "
                          f"{name} to .gitignore")
            return


def reserved_tree(record: PerfIssue | None, context: LintContext) -> Iterator[Problem]:
    """The synced tree commits a path under a reserved name: said on every report, where people look, since
    no report's own path shows it and perfbot ignores whatever it holds."""
    paths = context.reading.reserved
    if not paths:
        return
    folders = dict.fromkeys(_reserved_root(p) for p in paths)
    count = f"{len(paths)}{' or more' if len(paths) >= RESERVED_SHOWN else ''}"
    listed = ", ".join(f"'{shown(p, 80)}'" for p in paths[:3]) + (", ..." if len(paths) > 3 else "")
    yield Problem(1, f"the repository commits {count} path(s) under a name perfbot reserves ({listed}): perfbot "
                  "keeps its run folders and build marks outside the checkout and ignores these",
                  f"remove them (git rm -r --cached {' '.join(repr(shown(f, 80)) for f in list(folders)[:5])}) "
                  f"and add {', '.join(RESERVED_NAMES)} to .gitignore")


def _reserved_root(path: str) -> str:
    parts = path.split("/")
    at = min((parts.index(name) for name in RESERVED_NAMES if name in parts), default=len(parts) - 1)
    return "/".join(parts[:at + 1])


def reserved_paths(paths: Iterator[str] | list[str]) -> tuple[str, ...]:
    """The paths of a tree under a reserved name, sorted, at most RESERVED_SHOWN: what sync reads with."""
    found = sorted(p for p in paths if set(p.split("/")) & set(RESERVED_NAMES))
    return tuple(found[:RESERVED_SHOWN])


def draft_location(record: PerfIssue | None, context: LintContext) -> Iterator[Problem]:
    """A draft may be linted anywhere; only the file's place in the repository makes it a report."""
    path = context.path.replace("\\", "/")
    folder, _, name = path.rpartition("/")
    if _REPORT_NAME.fullmatch(name) and folder != REPORT_DIR and not folder.endswith(f"/{REPORT_DIR}"):
        yield Problem(1, f"'{shown(path, 120)}' is a draft: only files in {REPORT_DIR}/ are read as reports",
                      f"when it lints clean, move it to {REPORT_DIR}/{name} and commit it there")


def title_missing(record: PerfIssue, context: LintContext) -> Iterator[Problem]:
    if not record.title:
        yield Problem(_body_line(record), "no `# Title` heading",
                      "add a level-1 heading after the front matter, e.g. `# Nested matches copy the scrutinee`")


def track_missing(record: PerfIssue, context: LintContext) -> Iterator[Problem]:
    if record.track is None:
        yield Problem(_fact_line(record, "track"),
                      "track is neither stated nor inferable: no `track:` key, no byline (`SEQ · host`), "
                      "and no speedup or vs-C wording",
                      f"add the line {_fact_line_to_add(record, 'track: seq')} (language vs its 1-to-1 C translation "
                      "on one thread) or `par` for a parallel speedup far from ideal")


def backend_missing(record: PerfIssue, context: LintContext) -> Iterator[Problem]:
    if record.track == "par" and record.backend is None:
        yield Problem(_fact_line(record, "backend"),
                      "par report without a backend: no `backend:` key and no mention of Metal, CUDA or the C backend",
                      f"add the line {_fact_line_to_add(record, 'backend: c')} (or `metal`, `cuda`)")


def threads_missing(record: PerfIssue, context: LintContext) -> Iterator[Problem]:
    # A GPU claim is a speedup over the CPU against a target: no thread count of the GPU's is needed. A GPU
    # report whose claim could not be read lacks its baseline or target row, which ratio-missing names.
    if record.track == "par" and record.threads is None and record.claim != "gpu" and not _gpu_against_cpu(record):
        yield Problem(_fact_line(record, "threads"),
                      "par report without a thread count: no `threads:` key, no 'N threads' or 'T8' in the prose, "
                      "no thread counts in the table",
                      f"add the line {_fact_line_to_add(record, 'threads: N')}: the thread (or tome) count the "
                      "claim is about")


def _gpu_against_cpu(record: PerfIssue) -> bool:
    """A GPU report whose table sets GPU runs beside the language's CPU runs: a GPU claim, whose missing piece
    (the one-thread CPU baseline, or the target) ratio-missing names; a GPU scaling on its own needs a count."""
    rows = [r for r in record.measurements if r.seconds and r.impl in ("language", "")]
    return record.backend in ("metal", "cuda") and any(r.backend in ("metal", "cuda") for r in rows) and \
        any(r.backend not in ("metal", "cuda") for r in rows)


def ratio_missing(record: PerfIssue, context: LintContext) -> Iterator[Problem]:
    if record.ratio is not None:
        return
    meaning = ("this revision's time / the reference's time, e.g. 1.6" if record.reference
               else "expected (or patched) speedup over one CPU thread / achieved speedup, e.g. 7.5 for 3.2x of "
                    "an expected 24x" if record.backend in ("metal", "cuda")
               else "ideal speedup / achieved speedup, e.g. 4.2 for 1.9x on 8 threads" if record.track == "par"
               else "language time / C time, e.g. 3.4")
    yield Problem(_fact_line(record, "ratio"), f"no ratio: no `ratio:` key, no ratio or speedup in the prose, "
                                               f"and {_table_gap(record)}",
                  f"add the line {_fact_line_to_add(record, 'ratio: R')} with R = {meaning}")


def seq_within_tolerance(record: PerfIssue, context: LintContext) -> Iterator[Problem]:
    if record.track == "seq" and not record.reference and record.ratio is not None and record.ratio <= SEQ_TOLERANCE:
        origin = f" ({record.explain('ratio')})" if record.source_of("ratio") != "front-matter" else ""
        yield Problem(record.line_of("ratio"),
                      f"seq ratio {record.ratio:g}{origin} is within the {SEQ_TOLERANCE:g}x tolerance: "
                      f"up to {SEQ_TOLERANCE:g}x slower than C counts as near C, not an issue",
                      f"report seq gaps above {SEQ_TOLERANCE:g}x only: if the numbers are right, drop this report; "
                      "if not, correct `ratio:` and the measurements table")


def reference_within_factor(record: PerfIssue, context: LintContext) -> Iterator[Problem]:
    """A reference claim is that this revision is slower than the reference beyond [verify] reference_factor."""
    factor = context.reading.reference_factor
    if record.reference and record.ratio is not None and record.ratio <= factor:
        origin = f" ({record.explain('ratio')})" if record.source_of("ratio") != "front-matter" else ""
        yield Problem(record.line_of("ratio"),
                      f"reference ratio {record.ratio:g}{origin} is within the reference factor "
                      f"{factor:g}: this revision is not slower than `{shown(record.reference)}`",
                      "report a reference gap only when this revision is slower than the reference by more than "
                      "[verify] reference_factor; if not, drop this report or correct `ratio:` and the table")


def _row_pairs(record: PerfIssue) -> list[RowPair]:
    """What else the rows give: every language row over its C row, in every measure the table has; for a
    GPU claim the candidates its reading made are the whole story (target / achieved is no row pair)."""
    return [] if record.claim == "gpu" else every_pair(record.measurements, record.track, record.reference,
                                                       record.threads)


def _ratio_disagrees(record: PerfIssue) -> bool:
    stated, table = record.ratio, record.table_ratio
    if stated is None or not table or record.source_of("ratio") == "table":
        return False
    named = in_measure(_row_pairs(record), record.measure)
    # A report that names its measure is read in that column when the table has one; else every column counts.
    comparable = [p.value for p in named] if named else \
        [table, *record.table_candidates, *(p.value for p in _row_pairs(record))]
    return not any(abs(stated - value) / value <= RATIO_TOLERANCE for value in comparable if value)


def ratio_unsure(record: PerfIssue, context: LintContext) -> Iterator[Problem]:
    """A stated ratio the table may not bear out, where the linter cannot tell which row it comes from."""
    if record.table_unsure and _ratio_disagrees(record):
        yield Problem(record.line_of("ratio"),
                      f"cannot check ratio {record.ratio:g} against the table at line "
                      f"{record.line_of('measurements')}: {record.table_unsure}",
                      "time the thread count the claim is about in the table, or say in the claim's sentence "
                      "which row it comes from (\"at T12 the speedup is 3.1x\")")


def ratio_mismatch(record: PerfIssue, context: LintContext) -> Iterator[Problem]:
    """The stated ratio must match the table's, or the ratio of some pair of rows it compares (several builds,
    several thread counts): a report may quote the gcc row while the table also has clang."""
    stated, table = record.ratio, record.table_ratio
    if stated is None or table is None or not _ratio_disagrees(record) or record.table_unsure:
        return
    stated_as = record.explain("ratio") if record.source_of("ratio") != "front-matter" else f"stated ratio {stated:g}"
    named = in_measure(_row_pairs(record), record.measure)
    if named:  # the report names its measure and the table has its column: that column is what it says
        table = min(named, key=lambda p: abs(stated - p.value) / p.value).value
        table_as = f"{table:g} in its {named[0].measure} column"
    else:
        table_as = f"{table:g} ({record.table_evidence})" if record.table_evidence else f"{table:g}"
    gap = abs(stated - table) / table
    near = closest(stated, named or _row_pairs(record))
    others = (f"; the closest pair of its rows, {near.text}, is {abs(stated - near.value) / near.value:.0%} off"
              if near is not None and (near.value != table or named) else
              f"; no other pair of its rows gives {stated:g} either" if record.table_candidates else "")
    measure = f" (the report's measure is {record.measure})" if record.measure else ""
    yield Problem(record.line_of("ratio"),
                  f"{stated_as}{measure}, but the table at line {record.line_of('measurements')} gives {table_as}: "
                  f"{gap:.0%} apart (more than {RATIO_TOLERANCE:.0%}){others}",
                  f"make them agree: write {_restated(record, table)}, or correct the "
                  f"{'counts' if named else 'times'} in the table at line {record.line_of('measurements')}")


def ratio_meaning(record: PerfIssue, context: LintContext) -> Iterator[Problem]:
    if record.ratio_meaning and record.ratio is not None:
        yield Problem(record.line_of("ratio"), f"{record.explain('ratio')}. {record.ratio_meaning}",
                      "nothing to change; to claim plain scaling instead, time the same backend at -t 1 and -t N")


def context_missing(record: PerfIssue, context: LintContext) -> Iterator[Problem]:
    yield from _section_problems(record, "context", "Context",
                                 "what is slow, where, and why it matters, in a few sentences")


def repro_missing(record: PerfIssue, context: LintContext) -> Iterator[Problem]:
    """The program is what counts: a report whose code sits under no heading still has its reproduction."""
    section = record.section("reproduction")
    tag = context.reading.language_fence() or LANGUAGE_TAGS[0]
    if section is None and not record.blocks("language"):
        yield Problem(_body_line(record), f"no reproduction: no section and no code block in the language"
                                          f"{_tags_seen(record)}",
                      f"add `## Reproduction` with one ```{tag} block and its 1-to-1 ```c translation")
    elif section is not None and not record.blocks("language"):
        yield Problem(section.line, f"no code block in the language{_tags_seen(record)}",
                      f"put the program in a fence tagged `{tag}` (```{tag} ... ```) under "
                      f"'{shown(section.heading)}'{_own_tag_hint(record)}")


def c_translation_missing(record: PerfIssue, context: LintContext) -> Iterator[Problem]:
    # A report with `reference:` runs the same program on another implementation: it needs no translation.
    if not record.blocks("c") and not record.reference:
        section = record.section("reproduction")
        yield Problem(section.line if section else _body_line(record),
                      f"no fenced `c` block: the 1-to-1 C translation is missing{_tags_seen(record)}",
                      "add the 1-to-1 C translation in a ```c fence under the reproduction")


def measurements_missing(record: PerfIssue, context: LintContext) -> Iterator[Problem]:
    if record.measurements:
        return
    columns = "| implementation | time | threads | machine | command |" if record.track == "par" \
        else "| implementation | time | machine | command |"
    section = record.section("measurements")
    if section is not None:
        yield Problem(section.line, f"section '{shown(section.heading)}' has no table",
                      f"add a table under it: {columns}")
    else:
        yield Problem(_body_line(record), "no measurements table",
                      f"add `## Measurements` with a table: {columns}")


def root_cause_missing(record: PerfIssue, context: LintContext) -> Iterator[Problem]:
    yield from _section_problems(record, "root_cause", "Root cause",
                                 "what makes it slow, or `unknown` if nobody knows yet")


def fix_missing(record: PerfIssue, context: LintContext) -> Iterator[Problem]:
    yield from _section_problems(record, "fix", "Fix",
                                 "the fix as text, an inline diff, a pointer to the fix branch, or `unknown`")


def too_long(record: PerfIssue, context: LintContext) -> Iterator[Problem]:
    if record.prose_words > context.word_budget:
        yield Problem(_body_line(record),
                      f"prose is {record.prose_words} words, over the budget of {context.word_budget}",
                      f"cut at least {record.prose_words - context.word_budget} words: keep the context short; "
                      "code blocks, tables, headings and front matter do not count")


def supersedes_unknown(record: PerfIssue, context: LintContext) -> Iterator[Problem]:
    if context.known_slugs is None:
        return
    for slug in record.supersedes:
        if slug != record.slug and slug not in context.known_slugs:
            close = difflib.get_close_matches(slug, sorted(context.known_slugs), n=3, cutoff=0.6)
            hint = f"did you mean {', '.join(f'`{c}`' for c in close)}? " if close else ""
            yield Problem(record.line_of("supersedes"), f"supersedes '{shown(slug)}', which no report has ever had",
                          f"{hint}remove '{shown(slug)}' from `supersedes:` or correct the slug")


def supersedes_self(record: PerfIssue, context: LintContext) -> Iterator[Problem]:
    if record.slug in record.supersedes:
        yield Problem(record.line_of("supersedes"), f"report '{record.slug}' supersedes itself",
                      f"remove '{record.slug}' from `supersedes:` (list only the reports this one replaces)")


def fix_ref_invalid(record: PerfIssue, context: LintContext) -> Iterator[Problem]:
    fix = record.fix
    if fix is None or fix.lower() in ("inline", "unknown") or COMMIT_SHA.fullmatch(fix):
        return
    problem = branch_name_problem(fix)
    remedy = "write a fix branch (`fix: {}`), a commit sha (7-40 hex), `inline` or `unknown`"
    if problem is not None:
        yield Problem(record.line_of("fix"), f"fix '{shown(fix)}' is not a valid git branch name: {problem}",
                      remedy.format(suggest_branch_name(fix)))
    elif protected := protected_branch(fix):
        yield Problem(record.line_of("fix"),
                      f"fix '{shown(fix)}' names the {protected} branch; fixes live on their own branch",
                      remedy.format(f"fix/{record.slug}"))


def _section_problems(record: PerfIssue, name: str, heading: str, what: str) -> Iterator[Problem]:
    section = record.section(name)
    if section is None:
        yield Problem(_body_line(record), f"no {heading.lower()} section",
                      f"add `## {heading}` with {what}")
    elif not section.text:
        yield Problem(section.line, f"section '{shown(section.heading)}' is empty", f"write {what} under it")


def _fact_line(record: PerfIssue, name: str) -> int:
    return record.line_of(name, record.line_of("front_matter", 1))


def _body_line(record: PerfIssue) -> int:
    """Where a missing part would go: the title, else the first section, else line 1."""
    return record.line_of("title", record.sections[0].line if record.sections else 1)


def _tags_seen(record: PerfIssue) -> str:
    tags = sorted({block.tag or "(untagged)" for block in record.code_blocks})
    return f" (code blocks seen: {', '.join(tags)})" if tags else " (no code blocks at all)"


def _own_tag_hint(record: PerfIssue) -> str:
    """A block fenced with a tag perfbot does not know may be the runtime's own language, which only the
    repository can declare."""
    unknown = undeclared_tag(record.code_blocks)
    if unknown is None:
        return ""
    return (f"; or, if `{unknown}` is your runtime's language, declare it in .perfbot.toml: "
            f"[run] fence = [\"{unknown}\"]")


def _table_gap(record: PerfIssue) -> str:
    """Why the table gave no ratio, in the reader's terms."""
    if not record.measurements:
        return "there is no measurements table to compute it from"
    return f"in the table at line {record.line_of('measurements')} {record.table_gap or 'no ratio can be computed'}"


def _restated(record: PerfIssue, table: float) -> str:
    if record.source_of("ratio") == "front-matter":
        return f"`ratio: {table:g}`"
    return f"{table:g}x on line {record.line_of('ratio')} (ratio {table:g})"


def _fact_line_to_add(record: PerfIssue, line: str) -> str:
    """Where a missing fact goes: the front matter when there is one, else a `key: value` line of its own."""
    where = "to the front matter" if record.has_front_matter else "(front matter, or a line of its own under the title)"
    return f"`{line}` {where}"


def _slugify(name: str) -> str:
    stem = name[:-3] if name.lower().endswith(".md") else name
    words = re.sub(r"[^a-z0-9]+", "_", stem.lower()).strip("_")
    words = words.removeprefix("perf_").removeprefix("perf")
    return f"perf_{words.strip('_') or 'report'}"
