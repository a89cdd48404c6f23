"""Section headings and label paragraphs: which canonical section a heading opens, and where it ends."""
from __future__ import annotations

import re
from dataclasses import dataclass

_SYNONYMS = {
    "context": ("context", "background", "summary", "overview", "problem", "description"),
    "reproduction": (
        "reproduction", "repro", "minimal reproduction", "minimal repro", "reproducer",
        "steps to reproduce", "program", "programs", "code", "test case",
    ),
    "measurements": (
        "measurements", "measurement", "results", "benchmark", "benchmarks", "timings", "numbers", "data",
    ),
    "root_cause": ("root cause", "cause", "why", "analysis", "diagnosis", "root-cause"),
    "fix": (
        "fix", "proposed fix", "suggested fix", "solution", "remedy", "patch", "fix proposal", "possible fix",
    ),
}
SECTION_BY_HEADING = {words: name for name, synonyms in _SYNONYMS.items() for words in synonyms}
# A heading that is no synonym still names its section by a word in it ("Why it allocates", "What goes wrong",
# "Where the time goes", "Timing"). The word that comes first in the heading decides; ties go by this order.
# German, Spanish and French words too ("Ursache", "Solución", "Mesures"): agents follow their prompt's language.
_KEYWORDS = (
    ("root_cause", re.compile(r"\b(?:root[- ]?causes?|causes?d?|why|what goes wrong|what(?:'s| is) wrong|"
                              r"diagnos\w*|analysis|explanation|culprit|where the time goes|hypothes[ie]s|"
                              r"ursache|grund|causa|raz[oó]n|pourquoi)\b")),
    ("fix", re.compile(r"\b(?:fix(?:es|ed)?|patch(?:es)?|remed(?:y|ies)|solutions?|workarounds?|proposals?|"
                       r"mitigations?|suggestion|next steps?|to do|todo|l[oö]sung|soluci[oó]n|correctif|arreglo)\b")),
    ("measurements", re.compile(r"\b(?:measure\w*|timings?|numbers|results?|benchmarks?|bench|data|scaling|"
                                r"speedups?|profile|profiling|perf|messung\w*|mediciones|medidas|mesures|"
                                r"zeiten|tiempos)\b")),
    ("reproduction", re.compile(r"\b(?:repro\w*|programs?|code|test ?cases?|sources?|setup|how to run|"
                                r"translation|minimal example|programa|programm|c[oó]digo)\b")),
    ("context", re.compile(r"\b(?:context|background|summary|overview|problem|description|tl;?dr|motivation|"
                           r"kontext|contexto|contexte|hintergrund|resumen)\b")),
)
_QUESTION = frozenset({"q", "question", "frage", "pregunta"})  # "**Q:** Root cause?" then "**A:** ..."

_MARKUP = re.compile(r"[*_`]+")
# "2. Root cause", "2) Fix", "III. Analysis", "Step 3: Fix" all carry numbering that is not part of the name.
_NUMBERING = re.compile(r"^(?:(?:step\s+)?\d+(?:\.\d+)*[.):]?|[ivx]+[.)])\s+")
# Headings often carry a qualifier: "Reproduction (Bend + C)", "Fix: use a jump table", "Fix - idea".
_QUALIFIER = re.compile(r"\s*(?:\(.*\)|\[.*\]|:\s.*|\s[-\u2013\u2014]\s.*)$")
# A label paragraph line: "**Root cause:** unknown", "**Fix**: unknown", "Fix: unknown", "__Why:__ ...".
_LABEL_LINE = re.compile(
    r"^(?:\*\*|__)?\s*(?P<label>[A-Za-z][A-Za-z \-]{0,28}?)\s*"
    r"(?::\s*(?:\*\*|__)|(?:\*\*|__)\s*:|:)(?:\s+(?P<rest>.*))?$"
)
# "**Why?** ...", "**Cause.** ...", "**Next steps / fix.** ...": a bold lead-in ending in ? or . labels too.
_BOLD_LEAD = re.compile(r"^(?:\*\*|__)\s*(?P<label>[A-Za-z][A-Za-z /\-]{0,28}?)\s*[?.](?:\*\*|__)(?:\s+(?P<rest>.*))?$")


def section_of_heading(text: str, *, exact: bool = False) -> str | None:
    """The canonical section a heading opens (any case, numbering, trailing colon; qualifiers unless exact)."""
    words = _MARKUP.sub("", text).strip().lower()
    words = _NUMBERING.sub("", words).rstrip(" :.").strip()
    words = " ".join(words.split())
    name = SECTION_BY_HEADING.get(words)
    if name is None and not exact:
        name = SECTION_BY_HEADING.get(_QUALIFIER.sub("", words).rstrip(" :.")) or keyword_section(words)
    return name


def keyword_section(words: str) -> str | None:
    """The section a heading names by its earliest keyword, e.g. "why it allocates" -> root_cause."""
    hits = [(match.start(), order, name) for order, (name, pattern) in enumerate(_KEYWORDS)
            if (match := pattern.search(words))]
    return min(hits)[2] if hits else None


def label_of_line(line: str) -> tuple[str, str, str] | None:
    """(section, label as written, text after the label) when a prose line starts with a section label."""
    match = _LABEL_LINE.match(line.strip()) or _BOLD_LEAD.match(line.strip())
    if match is None:
        return None
    label = match.group("label").strip()
    words = " ".join(label.lower().split())
    if words in _QUESTION:  # the question names the section its answer belongs to
        question = " ".join((match.group("rest") or "").lower().strip(" ?*_").split())
        name = SECTION_BY_HEADING.get(question) or keyword_section(question)
        return (name, label, "") if name else None
    name = SECTION_BY_HEADING.get(words)
    if name is None and keyword_section(words) in ("root_cause", "fix"):  # "Likely cause:", "Suggested patch:"
        name = keyword_section(words)
    if name is None:
        return None
    return name, label, (match.group("rest") or "").strip()


@dataclass(frozen=True)
class Heading:
    """A markdown heading; `index` is the 0-based line, `section` the canonical name it opens (or None)."""

    index: int
    level: int
    text: str
    section: str | None


@dataclass(frozen=True)
class Label:
    """A prose line that opens a section by its label, e.g. "**Fix:** unknown" (0-based `index`)."""

    index: int
    section: str
    label: str
    rest: str


@dataclass(frozen=True)
class SectionSpan:
    """Where a section lives: 0-based [start, end) lines; `first_text` is prose on the label line itself."""

    name: str
    heading: str
    start: int
    end: int
    first_text: str = ""

    def contains(self, index: int) -> bool:
        return self.start <= index < self.end


def locate_sections(headings: list[Heading], labels: list[Label], line_count: int) -> list[SectionSpan]:
    """Spans of every canonical section: a heading opens one, a label opens one only if no heading did."""
    by_heading = {h.section for h in headings if h.section}
    seen_labels: set[str] = set()
    events: list[tuple[int, Heading | Label]] = [(h.index, h) for h in headings]
    for label in labels:
        if label.section not in by_heading and label.section not in seen_labels:
            seen_labels.add(label.section)
            events.append((label.index, label))
    events.sort(key=lambda event: event[0])

    spans: list[SectionSpan] = []
    open_span: tuple[Heading | Label, int | None] | None = None  # (opener, heading level or None for labels)

    def close(at: int) -> None:
        opener = open_span[0] if open_span else None
        if isinstance(opener, Heading) and opener.section is not None:  # only a section's heading opens a span
            spans.append(SectionSpan(opener.section, opener.text, opener.index, at))
        elif isinstance(opener, Label):
            spans.append(SectionSpan(opener.section, opener.label, opener.index, at, opener.rest))

    for index, event in events:
        if isinstance(event, Label):
            if open_span is not None:
                close(index)
            open_span = (event, None)
            continue
        current_level = open_span[1] if open_span else None
        if event.section is None:
            # Any other heading at the section's level or above ends it; a deeper one is a subheading.
            if open_span is not None and (current_level is None or event.level <= current_level):
                close(index)
                open_span = None
            continue
        same_section_subheading = (
            open_span is not None and current_level is not None
            and open_span[0].section == event.section and event.level > current_level
        )
        if same_section_subheading:
            continue
        if open_span is not None:
            close(index)
        open_span = (event, event.level)
    if open_span is not None:
        close(line_count)
    return spans
