"""The record of a report: frozen facts parsed from one `devs/issues/perf_<slug>.md` file."""
from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from enum import Enum

TRACKS = ("seq", "par")
BACKENDS = ("c", "metal", "cuda")
# The team's own rule: a competent C translation may be up to 2x faster before it counts as a finding.
SEQ_TOLERANCE = 2.0

REPORT_DIR = "devs/issues"
SLUG_RE = re.compile(r"perf_[a-z0-9_]+")
REPORT_PATH_RE = re.compile(r"devs/issues/(perf_[a-z0-9_]+)\.md")
# Where a verified-fixed report moves, its verdict appended; files there are history, never read as reports.
FIXED_DIR = "devs/fixed"
FIXED_PATH_RE = re.compile(r"devs/fixed/perf_[a-z0-9_]+\.md")

# Canonical section names; the parser maps every accepted heading synonym onto one of these.
SECTIONS = ("context", "reproduction", "measurements", "root_cause", "fix")


class Severity(str, Enum):  # noqa: UP042  (StrEnum would change str() and format() of stored values)
    ERROR = "error"
    WARNING = "warning"
    NOTE = "note"  # advice that is no fault of the file (a draft not yet where reports live)


def slug_of(path: str) -> str | None:
    """The slug of a repo-relative report path, or None: nothing else is ever read as a report."""
    match = REPORT_PATH_RE.fullmatch(path)
    return match.group(1) if match else None


def slug_from_filename(path: str) -> str:
    """A best-effort slug for any file name (for linting files outside a repo)."""
    stem = path.replace("\\", "/").rsplit("/", 1)[-1]
    return stem[:-3] if stem.endswith(".md") else stem


def is_report_path(path: str) -> bool:
    return slug_of(path) is not None


def is_bot_writable(path: str) -> bool:
    """The only files perfbot ever commits (on its own branches): reports, and fixed reports."""
    return is_report_path(path) or FIXED_PATH_RE.fullmatch(path) is not None


@dataclass(frozen=True)
class Finding:
    """One lint result: which file, which line, which rule, what is wrong and how to fix it."""

    file: str
    line: int
    rule: str
    severity: Severity
    message: str
    remedy: str

    @property
    def is_error(self) -> bool:
        return self.severity is Severity.ERROR

    def as_dict(self) -> dict:
        return {
            "file": self.file,
            "line": self.line,
            "rule": self.rule,
            "severity": self.severity.value,
            "message": self.message,
            "remedy": self.remedy,
        }

    @classmethod
    def from_dict(cls, data: dict) -> Finding:
        return cls(
            file=data["file"],
            line=int(data["line"]),
            rule=data["rule"],
            severity=Severity(data["severity"]),
            message=data["message"],
            remedy=data.get("remedy", ""),
        )


@dataclass(frozen=True)
class CodeBlock:
    """A fenced (or indented) code block; `lang` is normalised to language|c|cuda|metal|other."""

    lang: str
    tag: str
    code: str
    line: int
    closed: bool = True
    section: str | None = None


@dataclass(frozen=True)
class Measurement:
    """One run in the measurements table; `impl` is language|c|'' when the row names neither."""

    label: str
    impl: str
    seconds: float | None
    threads: int | None
    machine: str
    command: str
    line: int
    backend: str = ""  # where the run ran, when its label says: c (a CPU), metal or cuda
    speedup: float | None = None  # an achieved speedup the table states instead of (or beside) a time
    # Other measures the row gives beside its time, by column header: ("instructions", 1.0007e9), ("user", 0.24)
    counts: tuple[tuple[str, float], ...] = ()

    @property
    def time(self) -> float:
        """`seconds` of a row its caller kept for having a time (a row without one reaching here is a bug)."""
        if self.seconds is None:
            raise ValueError(f"the table row at line {self.line} has no time")
        return self.seconds


@dataclass(frozen=True)
class Section:
    """A canonical section as written: the heading it had, where it starts, its markdown text."""

    name: str
    heading: str
    line: int
    text: str

    @property
    def is_unknown(self) -> bool:
        """True when the author wrote that this part is not known yet (allowed for root cause and fix)."""
        words = re.sub(r"[^a-z ]", " ", self.text.lower()).split()
        return bool(words) and words[0] in {"unknown", "unclear", "tbd"} and len(words) <= 25


@dataclass(frozen=True)
class PerfIssue:
    """A parsed report. Facts are None when neither stated nor inferable; `lines` maps a fact to its line."""

    slug: str
    path: str
    title: str
    track: str | None
    backend: str | None
    threads: int | None
    ratio: float | None
    fix: str | None
    supersedes: tuple[str, ...]
    sections: tuple[Section, ...]
    code_blocks: tuple[CodeBlock, ...]
    measurements: tuple[Measurement, ...]
    table_ratio: float | None
    prose_words: int
    content_hash: str
    has_front_matter: bool
    lines: tuple[tuple[str, int], ...] = ()
    sources: tuple[tuple[str, str], ...] = ()
    unknown_keys: tuple[str, ...] = field(default=())
    host: str | None = None  # the machine the numbers were measured on, when a byline names it
    evidence: tuple[tuple[str, str], ...] = ()  # fact -> the words it was read or derived from
    table_evidence: str = ""  # how the table's ratio was computed
    table_candidates: tuple[float, ...] = ()  # every ratio a pair of comparable table rows gives
    ratio_meaning: str = ""  # set when the ratio is not ideal / achieved in the plain sense (a GPU vs a CPU)
    table_gap: str = ""  # why the table gives no ratio, in the reader's terms
    claim: str = ""  # "gpu" (target / achieved over the CPU), "reference" (head / reference) or "" (the plain one)
    table_unsure: str = ""  # why the table cannot tell which row a stated ratio comes from, naming the rows
    reference: str | None = None  # front matter `reference:`: what the program is measured against (default C)
    inputs: tuple[str, ...] = ()  # front matter `inputs:`: the program's argument(s), one verification each
    mode: str | None = None  # front matter `mode:` of a GPU report: gpu (forced, the default) | auto
    measure: str | None = None  # front matter `measure:`: what this report's ratio is made of (default: config)

    def line_of(self, name: str, default: int = 1) -> int:
        """The line where a fact or section was stated (1-based), or `default`."""
        return dict(self.lines).get(name, default)

    def source_of(self, name: str) -> str | None:
        """Where a fact came from: front-matter, prose, table or default."""
        return dict(self.sources).get(name)

    def explain(self, name: str) -> str:
        """ "ratio 2.1 derived from line 6: '3.8× at T8' (8 / 3.8)", for lint messages and `perfbot show`."""
        value = getattr(self, name, None)
        source = self.source_of(name)
        if value is None or source is None:
            return f"{name} unknown"
        how = dict(self.evidence).get(name, "")
        text = f"{name} {value:g}" if isinstance(value, float) else f"{name} {value}"
        if source == "default":
            return f"{text} (the default)"
        verb = "derived" if "/" in how and name in ("ratio", "threads") else "read"
        line = self.line_of(name)
        origin = {"front-matter": f"stated in the front matter on line {line}",
                  "byline": f"read from the byline on line {line}",
                  "agent": f"read by the agent reviewer from line {line}",
                  "table": f"{verb} from the table at line {line}"}.get(source, f"{verb} from line {line}")
        return f"{text} {origin}" + (f": {how}" if how else "")

    def section(self, name: str) -> Section | None:
        return next((s for s in self.sections if s.name == name), None)

    def blocks(self, lang: str) -> tuple[CodeBlock, ...]:
        return tuple(b for b in self.code_blocks if b.lang == lang)

    def facts(self) -> dict:
        """The machine facts as plain data, for storage and `--format json`."""
        return {
            "slug": self.slug,
            "title": self.title,
            "track": self.track,
            "backend": self.backend,
            "threads": self.threads,
            "ratio": self.ratio,
            "table_ratio": self.table_ratio,
            "fix": self.fix,
            "supersedes": list(self.supersedes),
            "host": self.host,
            "measure": self.measure,  # what the claimed ratio is made of: the standing names it beside the claim
            "derived": {name: self.explain(name) for name, source in self.sources
                        if source not in ("front-matter", "default")},
        }

    def as_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class ReadingOptions:
    """What a repository's `.perfbot.toml` changes in how its reports are read, built in one place
    (`PerfbotFile.reading`); the default reads a report as a repository without the file would."""

    reference_factor: float = 1.0  # [verify] reference_factor: a reference report must be slower than this
    language_tags: tuple[str, ...] = ()  # [run] fence: the runtime's own fence tags, beside the built-in ones
    # The operator's [llm] report_max_bytes: a larger report is read in part, with an error, and no LLM sees it.
    max_bytes: int = 256 * 1024
    # Paths of the synced tree under a name perfbot reserves (lint's RESERVED_NAMES, at most RESERVED_SHOWN):
    # perfbot ignores them, and every report's lint comment says so (rule reserved-in-tree).
    reserved: tuple[str, ...] = ()

    def language_fence(self) -> str | None:
        """The tag a report should fence its program with, when the repository names its own."""
        return self.language_tags[0] if self.language_tags else None


@dataclass(frozen=True)
class ParseResult:
    """What the parser makes of any byte string: a record (None only for an empty file) and findings."""

    record: PerfIssue | None
    findings: tuple[Finding, ...]
