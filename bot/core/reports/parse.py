"""parse(path, data): any bytes become a PerfIssue record plus parse findings, and never an exception."""
from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

from bot.core.reports.byline import read_byline
from bot.core.reports.fact_resolution import resolve_facts
from bot.core.reports.facts import ProseFacts, extract_prose_facts
from bot.core.reports.frontmatter import FrontMatter, read_front_matter
from bot.core.reports.headings import SectionSpan, locate_sections, section_of_heading
from bot.core.reports.records import (
    CodeBlock,
    Finding,
    ParseResult,
    PerfIssue,
    ReadingOptions,
    Section,
    Severity,
    slug_from_filename,
    slug_of,
)
from bot.core.reports.scan import MAX_NESTING, Scan, scan
from bot.core.reports.tables import RawTable, has_time_column, measurements_of

_BOM = "\ufeff"
_OPENING_DASHES = re.compile(r"-{3,}[ \t]*")


def parse(path: str, data: bytes, reading: ReadingOptions = ReadingOptions()) -> ParseResult:
    """The record of one report file; `record` is None only for an empty file. `reading` is the repository's
    (its own fence tags count as the language)."""
    text, encoding_finding = _decode(path, data)
    findings = [encoding_finding] if encoding_finding else []
    if not text.strip():
        findings.append(Finding(path, 1, "empty", Severity.ERROR, "file has no content",
                                "write the report: front matter, `# Title`, then the five sections"))
        return ParseResult(None, _sorted(findings))

    lines = text.split("\n")
    document = scan(text, lines, reading.language_tags)
    front_matter = FrontMatter()
    if document.front_matter is not None:
        front_matter = read_front_matter(document.front_matter[0], document.front_matter[1], path)
        findings.extend(front_matter.findings)
    elif _OPENING_DASHES.fullmatch(lines[0]):
        findings.append(Finding(path, 1, "front-matter", Severity.ERROR,
                                f"front matter opened with '{lines[0].strip()}' at line 1 is never closed",
                                "add a line `---` after the last `key: value` line, before the `# Title`"))

    for line in document.too_deep:
        findings.append(Finding(path, line, "nesting", Severity.ERROR,
                                f"reading stopped at line {line}: it nests blockquotes and lists more than "
                                f"{MAX_NESTING} levels deep (a list item counts two); what it holds, and in a list "
                                "everything after it, was not read",
                                "write it without the run of `>` or list markers (a report needs a few levels)"))

    title = _title_of(document, lines)
    spans = locate_sections([h for h in document.headings if h.index + 1 != (title.line if title else 0)],
                            list(document.labels), len(lines))
    sections = tuple(_section(span, lines) for span in spans) + _implicit_context(spans, document, title)
    blocks = tuple(
        CodeBlock(b.lang, b.tag, b.code, b.index + 1, b.closed, _span_at(spans, b.index)) for b in document.blocks
    )
    for block in document.blocks:
        if not block.closed:
            fence = f"{block.markup}{block.tag}"
            findings.append(Finding(path, block.index + 1, "fence-unclosed", Severity.ERROR,
                                    f"code fence '{fence}' opened at line {block.index + 1} is never closed",
                                    f"add a line {block.markup} (at least {len(block.markup)} "
                                    f"'{block.markup[0]}') right after the code"))

    table = _measurements_table(document.tables, spans)
    record = _resolve(path, text, document, front_matter, title, sections, blocks, table)
    return ParseResult(record, _sorted(findings))


def _decode(path: str, data: bytes | str) -> tuple[str, Finding | None]:
    """UTF-8 text with LF line ends and no BOM; bad bytes become U+FFFD and one `encoding` finding."""
    raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else bytes(data)
    try:
        return _normalise(raw.decode("utf-8")), None
    except UnicodeDecodeError as error:
        line = _normalise(raw[: error.start].decode("utf-8", "replace")).count("\n") + 1
        bad = raw[error.start: error.start + 1].hex()
        finding = Finding(path, line, "encoding", Severity.ERROR,
                          f"byte 0x{bad} on line {line} is not valid UTF-8",
                          "save the file as UTF-8 (the parser read the bad bytes as U+FFFD)")
        return _normalise(raw.decode("utf-8", "replace")), finding


def _normalise(text: str) -> str:
    return text.removeprefix(_BOM).replace("\r\n", "\n").replace("\r", "\n")


def _sorted(findings: list[Finding]) -> tuple[Finding, ...]:
    return tuple(sorted(findings, key=lambda f: (f.line, f.rule)))


def _section(span: SectionSpan, lines: list[str]) -> Section:
    body = "\n".join(lines[span.start + 1: span.end])
    text = f"{span.first_text}\n{body}" if span.first_text else body
    return Section(span.name, span.heading, span.start + 1, text.strip())


def _span_at(spans: list[SectionSpan], index: int) -> str | None:
    return next((span.name for span in spans if span.contains(index)), None)


def _measurements_table(tables: tuple[RawTable, ...], spans: list[SectionSpan]) -> RawTable | None:
    """The first table in a measurements section, else the first table anywhere with a time column."""
    in_section = [t for t in tables if _span_at(spans, t.line - 1) == "measurements"]
    return next(iter(in_section), None) or next((t for t in tables if has_time_column(t)), None)


def _resolve(path: str, text: str, document: Scan, front_matter: FrontMatter, title: _Title | None,
             sections: tuple[Section, ...], blocks: tuple[CodeBlock, ...], table: RawTable | None) -> PerfIssue:
    stated = front_matter.facts
    prose = ProseFacts()
    byline = None
    if not _states_every_fact(stated):  # reading prose is the slowest step; canonical reports do not need it
        prose = extract_prose_facts(list(document.prose), tuple(b.lang for b in blocks))
        byline = read_byline(_paragraphs_under_title(document, title))
    rows = measurements_of(table) if table else ()
    table_line = table.line if table else 1
    resolved = resolve_facts(stated, front_matter.lines, document.front_matter is not None, prose, byline, rows,
                             table_line)
    values = resolved.values
    lines = dict(resolved.lines)
    if title is not None:
        lines["title"] = title.line
    if table is not None:
        lines["measurements"] = table.line
    if document.front_matter is not None:
        lines["front_matter"] = document.front_matter[1] - 1
    if "supersedes" in front_matter.lines:
        lines["supersedes"] = front_matter.lines["supersedes"]
    return PerfIssue(
        slug=slug_of(path.replace("\\", "/")) or slug_from_filename(path),
        path=path,
        title=title.text if title else "",
        track=values.get("track"),
        backend=values.get("backend"),
        threads=values.get("threads"),
        ratio=values.get("ratio"),
        fix=values.get("fix"),
        supersedes=stated.get("supersedes", ()),
        sections=sections,
        code_blocks=blocks,
        measurements=rows,
        table_ratio=resolved.table.ratio,
        prose_words=document.prose_words,
        content_hash=hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest(),
        has_front_matter=document.front_matter is not None,
        lines=tuple(lines.items()),
        sources=tuple(resolved.sources.items()),
        unknown_keys=front_matter.unknown_keys,
        reference=stated.get("reference"),
        inputs=stated.get("inputs", ()),
        mode=stated.get("mode"),
        measure=stated.get("measure"),
        host=values.get("host"),
        evidence=tuple(resolved.evidence.items()),
        table_evidence=resolved.table.evidence,
        table_candidates=resolved.table.candidates,
        ratio_meaning=resolved.table.meaning if resolved.sources.get("ratio") == "table" else "",
        table_gap=resolved.table.gap,
        claim=resolved.table.kind,
        table_unsure=resolved.table.unsure,
    )


def _states_every_fact(stated: dict) -> bool:
    if "track" not in stated or "ratio" not in stated:
        return False
    if stated.get("backend") in ("metal", "cuda"):
        return False  # a GPU claim's target (an expected speedup) may stand only in the prose
    return stated["track"] == "seq" or ("backend" in stated and "threads" in stated)


@dataclass(frozen=True)
class _Title:
    text: str
    line: int


def _title_of(document: Scan, lines: list[str]) -> _Title | None:
    """The first `#` heading that is not a section name ("# Fix: ..." is still a title); else, as in a commit
    message, a one-line first paragraph followed by a blank line."""
    heading = next((h for h in document.headings if h.level == 1 and not section_of_heading(h.text, exact=True)),
                   None)
    if heading is not None:
        return _Title(heading.text, heading.index + 1)
    first = document.prose[0] if document.prose else None
    if first is None or any(h.index + 1 == first[0] for h in document.headings):
        return None
    line_text = lines[first[0] - 1].strip()
    if line_text == first[1] and len(line_text) <= 100 and (first[0] >= len(lines) or not lines[first[0]].strip()):
        return _Title(line_text, first[0])
    return None


def _implicit_context(spans: list[SectionSpan], document: Scan, title: _Title | None) -> tuple[Section, ...]:
    """With no context heading, the prose between the title and the first section is the context, as in a
    commit message's body (a byline alone is not)."""
    if any(span.name == "context" for span in spans):
        return ()
    first_section = min((span.start + 1 for span in spans), default=10 ** 9)
    paragraphs = [(n, t) for n, t in _paragraphs_under_title(document, title) if n < first_section]
    byline = read_byline(paragraphs)
    byline_line = byline.track.line if byline is not None and byline.track is not None else None
    text = "\n\n".join(t for n, t in paragraphs if n != byline_line).strip()
    if not text:
        return ()
    return (Section("context", "", paragraphs[0][0], text),)


def _paragraphs_under_title(document: Scan, title: _Title | None) -> list[tuple[int, str]]:
    """Prose between the title and the first heading after it: where a byline sits."""
    start = title.line if title else 0
    next_heading = min((h.index + 1 for h in document.headings if h.index + 1 > start), default=10 ** 9)
    heading_lines = {h.index + 1 for h in document.headings}
    return [(n, t) for n, t in document.prose if start < n < next_heading and n not in heading_lines]
