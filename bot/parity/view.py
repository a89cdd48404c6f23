"""How a parity report reads: lint-style text lines, JSON, a check run's output and annotations, a status line."""
from __future__ import annotations

from bot.parity.check import ParityReport

TITLES = {"missing-twin": "a block without its twin", "drifted-twin": "twins whose shapes differ",
          "one-sided-change": "a twin changed on one side only", "duplicate-block": "two blocks of one name",
          "bad-marker": "a marker that names no block"}
MAX_SUMMARY_FINDINGS = 100


def render_text(report: ParityReport) -> str:
    lines = []
    for finding in report.findings:
        first = finding.locations[0]
        lines.append(f"{first.path}:{first.line}: error [{finding.rule}] {finding.message}")
    lines.append(f"{report.files} file(s) checked: {report.pairs} twin pair(s), {len(report.findings)} problem(s)")
    return "\n".join(lines)


def as_json(report: ParityReport) -> dict:
    return {"files": report.files, "pairs": report.pairs, "ok": report.ok,
            "findings": [f.as_dict() for f in report.findings]}


def headline(report: ParityReport) -> str:
    if report.ok:
        return f"{report.pairs} Metal/CUDA twin pair(s) in step"
    return f"{len(report.findings)} parity problem(s) in {report.pairs} twin pair(s)"


def status_description(report: ParityReport) -> str:
    """At most 140 characters, as GitHub keeps them: the count, then the first problem's rule and place."""
    if report.ok:
        return headline(report)
    first = report.findings[0]
    where = f"{first.locations[0].path}:{first.locations[0].line}"
    return f"{headline(report)}; first: {first.rule} at {where}"[:140]


def summary_markdown(report: ParityReport) -> str:
    if report.ok:
        return (f"Every Metal block has its CUDA twin and the other way round, with the same shape "
                f"({report.pairs} pair(s) in {report.files} file(s)).")
    lines = [f"{headline(report)} in {report.files} file(s). Keep every CUDA block in a 1 to 1 correspondence "
             "to its Metal block: a fix in one must fix the other.", ""]
    for finding in report.findings[:MAX_SUMMARY_FINDINGS]:
        lines.append(f"- **{finding.rule}**: {_literal(finding.message)}")
    if len(report.findings) > MAX_SUMMARY_FINDINGS:
        lines.append(f"- … and {len(report.findings) - MAX_SUMMARY_FINDINGS} more (see the annotations)")
    return "\n".join(lines)


def check_annotations(report: ParityReport) -> tuple[dict, ...]:
    """One failure annotation per place a finding names: both twins of a drift or a one-sided change."""
    out = []
    for finding in report.findings:
        for location in finding.locations:
            out.append({"path": location.path, "start_line": location.line,
                        "end_line": max(location.end_line, location.line), "annotation_level": "failure",
                        "title": f"parity: {TITLES.get(finding.rule, finding.rule)}"[:255],
                        "message": finding.message[:60000]})
    return tuple(out)


def digest_rows(report: ParityReport) -> list[dict]:
    return [{"rule": f.rule, "where": f"{f.locations[0].path}:{f.locations[0].line}", "message": f.message}
            for f in report.findings]


def _literal(text: str) -> str:
    """Names and paths from the repository: no mention pings anyone and no HTML is written."""
    return text.replace("@", "@\u200b").replace("<", "&lt;")

