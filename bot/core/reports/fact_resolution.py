"""Each fact of a report from the strongest source that states it, with where it came from and how."""
from __future__ import annotations

from dataclasses import dataclass, field, replace

from bot.core.reports.byline import Byline
from bot.core.reports.facts import Fact, ProseFacts
from bot.core.reports.gpu_claims import GPU_BACKENDS, gpu_claim
from bot.core.reports.records import Measurement
from bot.core.reports.table_ratios import TableRatio, reference_ratio, significant, table_ratio

FACT_NAMES = ("track", "backend", "threads", "ratio", "fix", "host")


@dataclass
class Settled:
    """Facts as they settle: the first source to state a fact wins, so callers go strongest source first."""

    values: dict = field(default_factory=dict)
    lines: dict[str, int] = field(default_factory=dict)
    sources: dict[str, str] = field(default_factory=dict)
    evidence: dict[str, str] = field(default_factory=dict)

    def settle(self, name: str, value: object, line: int, source: str, evidence: str = "") -> None:
        if name not in self.values and value is not None:
            self.values[name], self.lines[name], self.sources[name] = value, line, source
            if evidence:
                self.evidence[name] = evidence

    def settle_fact(self, name: str, fact: Fact | None, source: str = "prose", how: str = "") -> None:
        if fact is not None:
            quote = f"'{fact.quote}'" if fact.quote else ""
            self.settle(name, fact.value, fact.line, source, " ".join(w for w in (quote, how) if w))


@dataclass(frozen=True)
class Resolved:
    values: dict
    lines: dict
    sources: dict
    evidence: dict
    table: TableRatio


def resolve_facts(stated: dict, stated_lines: dict, has_front_matter: bool, prose: ProseFacts,
                  byline: Byline | None, rows: tuple[Measurement, ...], table_line: int) -> Resolved:
    """Front matter, then the byline, then prose, then the table, then a default: the order of trust."""
    facts = Settled()
    for name in ("track", "backend", "threads", "ratio", "fix"):
        if name in stated:
            facts.settle(name, stated[name], stated_lines.get(name, 1), "front-matter",
                         f"`{name}: {stated[name]}` in the front matter")
    if byline is not None:
        for name in ("track", "backend", "threads", "host"):
            facts.settle_fact(name, getattr(byline, name), "byline")

    facts.settle_fact("track", prose.track)
    facts.settle("track", _track_of_table(rows), table_line, "table")
    facts.settle_fact("track", prose.track_hint)
    if stated.get("reference"):
        facts.settle("track", "seq", stated_lines.get("reference", 1), "default",
                     "a `reference:` report compares this revision with another one")
    track = facts.values.get("track")

    if track == "par" or (track is None and prose.backend_is_explicit):
        facts.settle_fact("backend", prose.backend)
    backend = facts.values.get("backend")
    table = _claim_table(rows, stated, track, backend, prose)
    gpu = table.kind == "gpu"
    if track == "par" and not gpu:
        # Only a count the claim's own sentence (or the front matter, or a byline) names picks the table row.
        facts.settle_fact("threads", prose.claim_threads, how="(the sentence stating the claim)")
        facts.settle_fact("threads", prose.speedup_threads)
        facts.settle_fact("threads", prose.ratio_threads)
        sure = facts.values.get("threads")
        if sure:
            table = table_ratio(rows, track, sure, backend)
        elif prose.threads:  # a count merely mentioned ("a 16-core box"): the ratio at it, any row may match
            weak = table_ratio(rows, track, prose.threads.value, backend)
            table = replace(weak, unsure="", candidates=tuple(dict.fromkeys((*weak.candidates, *table.candidates))))
        facts.settle_fact("threads", prose.threads)
        facts.settle("threads", table.threads, table_line, "table")
    elif track == "seq":
        facts.settle("threads", 1, 1, "default")
    if track == "par":
        facts.settle("backend", _backend_of_table(rows), table_line, "table")
    if track != "par" or not has_front_matter:
        # seq is always C; a par report without front matter or byline backend gets the spec's default backend.
        facts.settle("backend", "c", 1, "default")

    facts.settle_fact("ratio", prose.stated_ratio)
    if track != "par" and not stated.get("reference"):
        facts.settle_fact("ratio", prose.seq_ratio)
    if not gpu and not stated.get("reference"):
        _ratio_from_prose_speedup(facts, prose, track)
    facts.settle("ratio", table.ratio, table_line, "table", table.evidence)
    return Resolved(facts.values, facts.lines, facts.sources, facts.evidence, table)


def _claim_table(rows: tuple[Measurement, ...], stated: dict, track: str | None, backend: str | None,
                 prose: ProseFacts) -> TableRatio:
    """The table's ratio by the kind of claim: against a reference revision, a GPU against its target, or the
    plain one (seq: language / C; par: N / speedup, at the table's largest count until the claim names one)."""
    if stated.get("reference"):
        return reference_ratio(rows, stated["reference"])
    if track in ("par", None) and backend in (*GPU_BACKENDS, None):
        expected = prose.expected
        claim = gpu_claim(rows, expected.value if expected else None, expected.quote if expected else "")
        if claim is not None:
            return claim
    return table_ratio(rows, track, None, backend)


def _ratio_from_prose_speedup(facts: Settled, prose: ProseFacts, track: str | None) -> None:
    """A speedup stated in prose ("3.8× at T8"), or times at thread counts ("T1 0.214 s, T10 0.031 s")."""
    if track == "seq":
        return
    threads = prose.speedup_threads.value if prose.speedup_threads else facts.values.get("threads")
    if prose.speedup and threads and threads > 1:
        ratio = significant(threads / prose.speedup.value)
        facts.settle("ratio", ratio, prose.speedup.line, "prose",
                     f"'{prose.speedup.quote}' ({threads} / {prose.speedup.value:g})")
        return
    times: dict = {}
    for hit in prose.thread_times:  # the first time stated at a thread count is the claim; later ones are fixes
        if hit.seconds:
            times.setdefault(hit.threads, hit)
    counts = sorted(n for n in times if n and n > 1)
    if 1 in times and counts:
        n = facts.values.get("threads") if facts.values.get("threads") in times else counts[-1]
        one, many = times[1], times[n]
        speedup = one.seconds / many.seconds
        facts.settle("ratio", significant(n / speedup), many.line, "prose",
                     f"'{one.quote}' and '{many.quote}' ({one.seconds:g} s / {many.seconds:g} s = {speedup:.3g}x "
                     f"speedup; {n} / {speedup:.3g})")
        if track == "par":
            facts.settle("threads", n, many.line, "prose", f"'{many.quote}'")


def _backend_of_table(rows: tuple[Measurement, ...]) -> str | None:
    """The backend every timed language row of the table names ("bend (C backend, clang -O2)"), if one."""
    backends = {r.backend for r in rows if r.impl == "language" and (r.seconds is not None or r.speedup)}
    return backends.pop() if len(backends) == 1 and "" not in backends else None


def _track_of_table(rows: tuple[Measurement, ...]) -> str | None:
    """A table comparing the language with C at one thread is seq; the language at several counts is par."""
    timed = [r for r in rows if r.seconds is not None or r.speedup]
    if any(r.backend in ("metal", "cuda") for r in timed if r.impl == "language"):
        return "par"  # seq is one CPU thread against C: a GPU run in the table is a par claim
    if any(r.impl == "language" for r in timed) and any(r.impl == "c" for r in timed):
        return "seq" if len({r.threads for r in timed if r.threads} - {1}) == 0 else "par"
    return "par" if len({r.threads for r in timed if r.impl != "c" and r.threads}) >= 2 else None
