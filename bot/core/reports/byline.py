"""The byline under a report's title, e.g. `SEQ · this Linux box (2 vCPU) · runtime HEAD`: track, backend, host."""
from __future__ import annotations

import re
from dataclasses import dataclass

from bot.core.reports.facts import Fact

# "·", "•", "|", " — ", " - ", ",", ";": what agents put between a byline's parts ("16C/32T" stays one part).
_SEPARATOR = re.compile(r"\s*(?:[\u00b7\u2022|;,]|\s[\u2014\u2013-]\s)\s*")
_MARKUP = re.compile(r"[*_`]+")
_TRACK = re.compile(r"(?i)^(?:track\s*[:=]\s*)?(seq|par|sequential|parallel)(?:\s+(?:track|agent|finding|report))?$")
_TRACK_IN_TEXT = re.compile(r"^(SEQ|PAR)\b")  # "SEQ agent, one thread": upper case only, inside a longer part
_BACKENDS = (
    ("metal", re.compile(r"(?i)^(?:backend\s*[:=]\s*)?(?:apple\s+)?(?:metal|msl)(?:\s+(?:backend|gpu))?$")),
    ("cuda", re.compile(r"(?i)^(?:backend\s*[:=]\s*)?(?:cuda|nvidia(?:\s+gpu)?|gpu)(?:\s+(?:backend|gpu))?$")),
    ("c", re.compile(r"(?i)^(?:backend\s*[:=]\s*)?(?:c|cpu)(?:\s+backend)?(?:\s*\(?(?:pthreads|threads)\)?)?$")),
)
_HOST = re.compile(r"(?i)^(?:(?:bench\s+)?host|machine|on|box)\s*[:=]?\s*(?P<host>.+)$")
_REVISION = re.compile(r"(?i)\b(?:head|main|master|commit|rev|runtime@|[0-9a-f]{7,40})\b|@")
_THREADS = re.compile(r"(?i)^(?:-?T\s?(\d{1,4})|(\d{1,4})\s+(?:threads?|tomes?))$")
_MACHINE_HINT = re.compile(r"(?i)\b(?:box|host|mini|mac|linux|ryzen|xeon|epyc|intel|amd|apple|m[1-4]\b|rtx|"
                           r"gtx|a100|h100|vcpu|cores?|laptop|server|\d+c/\d+t)\b|-\d{2}\b")


@dataclass(frozen=True)
class Byline:
    """What a byline says; each part keeps its line and its words."""

    track: Fact[str] | None = None
    backend: Fact[str] | None = None
    host: Fact[str] | None = None
    threads: Fact[int] | None = None


def read_byline(paragraphs: list[tuple[int, str]]) -> Byline | None:
    """The first short paragraph (of those given: the ones between the title and the first section) that
    splits into parts, one of them a track; None when there is none."""
    for line, text in paragraphs[:3]:
        clean = " ".join(_MARKUP.sub("", text).split())  # one space between words keeps splitting linear
        if len(clean) > 300 or len(clean.split()) > 30:
            continue
        parts = [p.strip(" .") for p in _SEPARATOR.split(clean) if p.strip(" .")]
        if len(parts) < 2:
            continue
        byline = _classify(parts, line)
        if byline.track is not None:
            return byline
    return None


def _classify(parts: list[str], line: int) -> Byline:
    found: dict[str, Fact] = {}
    for part in parts:
        if "track" not in found and (match := _TRACK.match(part) or _TRACK_IN_TEXT.match(part)):
            word = match.group(1).lower()
            found["track"] = Fact("seq" if word.startswith("seq") else "par", line, part)
            continue
        backend = next((name for name, pattern in _BACKENDS if pattern.match(part)), None)
        if backend and "backend" not in found:
            found["backend"] = Fact(backend, line, part)
            continue
        if "threads" not in found and (match := _THREADS.match(part)):
            found["threads"] = Fact(int(match.group(1) or match.group(2)), line, part)
            continue
        if "host" not in found:
            host = _HOST.match(part)
            if host is not None:
                found["host"] = Fact(host.group("host").strip(), line, part)
            elif _MACHINE_HINT.search(part) and not _REVISION.search(part):
                found["host"] = Fact(part, line, part)
    return Byline(found.get("track"), found.get("backend"), found.get("host"), found.get("threads"))
