"""parse(path, data): any bytes become a PerfIssue record plus parse findings, and never an exception."""
from __future__ import annotations

import hashlib
import re

from bot.core.facts import Fact, ProseFacts, extract_prose_facts
from bot.core.frontmatter import FrontMatter, read_front_matter
from bot.core.headings import SectionSpan, locate_sections, section_of_heading
from bot.core.records import CodeBlock, Finding, ParseResult, PerfIssue, Section, Severity, slug_from_filename, slug_of
from bot.core.scan import Scan, scan
from bot.core.tables import RawTable, has_time_column, measurements_of, significant, table_ratio

_BOM = "\ufeff"
_OPENING_DASHES = re.compile(r"-{3,}[ \t]*")


def parse(path: str, data: bytes) -> ParseResult:
    """The record of one report file; `record` is None only for an empty file."""
    text, encoding_finding = _decode(path, data)
    findings = [encoding_finding] if encoding_finding else []
    if not text.strip():
        findings.append(Finding(path, 1, "empty", Severity.ERROR, "file has no content",
                                "write the report: front matter, `# Title`, then the five sections"))
        return ParseResult(None, _sorted(findings))

    lines = text.split("\n")
    document = scan(text, lines)
    front_matter = FrontMatter()
    if document.front_matter is not None:
        front_matter = read_front_matter(document.front_matter[0], document.front_matter[1], path)
        findings.extend(front_matter.findings)
    elif _OPENING_DASHES.fullmatch(lines[0]):
        findings.append(Finding(path, 1, "front-matter", Severity.ERROR,
                                f"front matter opened with '{lines[0].strip()}' at line 1 is never closed",
                                "add a line `---` after the last `key: value` line, before the `# Title`"))

    # The first `#` heading is the title unless it is exactly a section name ("# Fix: ..." is still a title).
    title = next((h for h in document.headings if h.level == 1 and not section_of_heading(h.text, exact=True)), None)
    spans = locate_sections([h for h in document.headings if h is not title], list(document.labels), len(lines))
    sections = tuple(_section(span, lines) for span in spans)
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


def _decode(path: str, data: bytes) -> tuple[str, Finding | None]:
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


class _Facts:
    """Facts as they settle: the first source to state a fact wins, so callers go strongest source first."""

    def __init__(self) -> None:
        self.values: dict = {}
        self.lines: dict[str, int] = {}
        self.sources: dict[str, str] = {}

    def settle(self, name: str, value, line: int, source: str) -> None:
        if name not in self.values and value is not None:
            self.values[name], self.lines[name], self.sources[name] = value, line, source

    def settle_fact(self, name: str, fact: Fact | None, source: str = "prose") -> None:
        if fact is not None:
            self.settle(name, fact.value, fact.line, source)


def _resolve(path: str, text: str, document: Scan, front_matter: FrontMatter, title, sections, blocks,
             table: RawTable | None) -> PerfIssue:
    """Each fact from the strongest source that states it: front matter, prose, table, then a default."""
    stated = front_matter.facts
    prose = ProseFacts()
    if not _states_every_fact(stated):  # reading prose is the slowest step; canonical reports do not need it
        prose = extract_prose_facts(list(document.prose), tuple(b.lang for b in blocks))
    rows = measurements_of(table) if table else ()
    table_line = table.line if table else 1
    facts = _Facts()
    for name in ("track", "backend", "threads", "ratio", "fix"):
        facts.settle(name, stated.get(name), front_matter.lines.get(name, 1), "front-matter")

    facts.settle_fact("track", prose.track)
    facts.settle("track", _track_of_table(rows), table_line, "table")
    facts.settle_fact("track", prose.track_hint)
    track = facts.values.get("track")

    if track == "par":
        facts.settle_fact("threads", prose.speedup_threads)
        facts.settle_fact("threads", prose.threads)
    ratio_from_table, table_threads = table_ratio(rows, track, facts.values.get("threads"))
    if track == "par":
        facts.settle("threads", table_threads, table_line, "table")
    elif track == "seq":
        facts.settle("threads", 1, 1, "default")

    if track == "par" or (track is None and prose.backend_is_explicit):
        facts.settle_fact("backend", prose.backend)
    if track != "par" or document.front_matter is None:
        # seq is always C; a par report without front matter gets the spec's default backend.
        facts.settle("backend", "c", 1, "default")

    facts.settle_fact("ratio", prose.stated_ratio)
    if track != "par":
        facts.settle_fact("ratio", prose.seq_ratio)
    threads_of_speedup = prose.speedup_threads.value if prose.speedup_threads else facts.values.get("threads")
    if prose.speedup and track != "seq" and (threads_of_speedup or 0) > 1:
        facts.settle("ratio", significant(threads_of_speedup / prose.speedup.value), prose.speedup.line, "prose")
    facts.settle("ratio", ratio_from_table, table_line, "table")

    lines = dict(facts.lines)
    if title is not None:
        lines["title"] = title.index + 1
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
        track=track,
        backend=facts.values.get("backend"),
        threads=facts.values.get("threads"),
        ratio=facts.values.get("ratio"),
        fix=facts.values.get("fix"),
        supersedes=stated.get("supersedes", ()),
        sections=sections,
        code_blocks=blocks,
        measurements=rows,
        table_ratio=ratio_from_table,
        prose_words=document.prose_words,
        content_hash=hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest(),
        has_front_matter=document.front_matter is not None,
        lines=tuple(lines.items()),
        sources=tuple(facts.sources.items()),
        unknown_keys=front_matter.unknown_keys,
        reference=stated.get("reference"),
        inputs=stated.get("inputs", ()),
    )


def _states_every_fact(stated: dict) -> bool:
    if "track" not in stated or "ratio" not in stated:
        return False
    return stated["track"] == "seq" or ("backend" in stated and "threads" in stated)


def _track_of_table(rows) -> str | None:
    """A table comparing the language with C is seq; one language timed at several thread counts is par."""
    timed = [r for r in rows if r.seconds is not None]
    if any(r.impl == "language" for r in timed) and any(r.impl == "c" for r in timed):
        return "seq" if len({r.threads for r in timed if r.threads} - {1}) == 0 else "par"
    return "par" if len({r.threads for r in timed if r.impl != "c" and r.threads}) >= 2 else None
