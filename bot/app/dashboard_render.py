"""Turning stored values into page parts: markdown as safe HTML, bench samples as charts and tables, small formats."""
from __future__ import annotations

import re
from collections.abc import Callable
from datetime import datetime
from functools import lru_cache

from markupsafe import Markup

from bot.adapters import charts
from bot.core.lead import mermaid_charts, wording
from bot.core.verify import bench_view, scaling_view
from bot.core.verify.bench_run import BenchRun
from bot.core.verify.run_parts import RunResult, SideResult
from bot.core.verify.units import result_unit

_COMMENT = re.compile(r"<!--.*?-->\n?", re.S)


@lru_cache(maxsize=1)
def _markdown():
    from markdown_it import MarkdownIt
    from markdown_it.common.utils import escapeHtml

    # html off: raw HTML in a report is shown as text. Images off: a report must not make the browser fetch
    # anything (its `![x](url)` shows as a link to follow or not). markdown-it refuses javascript: links itself.
    from mdit_py_plugins.front_matter import front_matter_plugin

    md = MarkdownIt("commonmark", {"html": False, "linkify": False}).enable(["table", "strikethrough"]).disable("image")
    md.use(front_matter_plugin)

    def front_matter(renderer, tokens, idx, options, env):
        return f'<pre class="front-matter"><code>{escapeHtml(tokens[idx].content)}</code></pre>\n'

    def link_open(renderer, tokens, idx, options, env):
        tokens[idx].attrSet("rel", "nofollow noopener noreferrer")
        return renderer.renderToken(tokens, idx, options, env)

    def fence(renderer, tokens, idx, options, env):
        token = tokens[idx]
        drawn = mermaid_svg(token.content) if token.info.strip() == "mermaid" else ""
        if not drawn:
            return renderer.fence(tokens, idx, options, env)
        return f'<div class="panel mermaid-chart">{drawn}</div>\n'

    md.add_render_rule("link_open", link_open)
    md.add_render_rule("front_matter", front_matter)
    md.add_render_rule("fence", fence)
    return md


def mermaid_svg(source: str) -> str:
    """A mermaid block perfbot wrote (the digest's charts, for GitHub) drawn as SVG like every other chart here;
    "" for one it cannot read, which then stays the report's own text."""
    chart = mermaid_charts.parse(source)
    if isinstance(chart, mermaid_charts.PieChart):
        return charts.pie_chart(chart.slices, chart.title)
    if isinstance(chart, mermaid_charts.XYChart):
        return charts.xy_chart(chart.categories, chart.series, chart.title, chart.x_label, chart.y_label, chart.y_top)
    return ""


@lru_cache(maxsize=1)
def _inline():
    from markdown_it import MarkdownIt

    # A title is one line an agent wrote: only `code`, *emphasis* and backslash escapes mean anything in it.
    return MarkdownIt("zero", {"html": False}).enable(["backticks", "emphasis", "escape"])


def title(text: str | None) -> Markup:
    """A report's title as people read it: `%` as code, sum\\_mod as sum_mod, never raw markdown."""
    return Markup(_inline().renderInline(text or ""))


def plural(count, word: str, many: str | None = None) -> str:
    """'1 thread', '8 threads', '0 errors'."""
    return f"{count} {word if count == 1 else many or word + 's'}"


def markdown(text: str | None) -> Markup:
    """markdown-it's output is built from escaped text, so it is the one HTML we hand to the page as-is."""
    return Markup(_markdown().render(text or ""))


def digest_markdown(text: str | None) -> Markup:
    """A digest is perfbot's own text; its hidden markers (`<!-- perfbot:... -->`) are for GitHub, not people."""
    return markdown(_COMMENT.sub("", text or ""))


def _names(result: RunResult, threads: int | None) -> tuple[str, str]:
    first, second, _ = bench_view.column_names(result, threads)
    return first.split(" (")[0], second.split(" (")[0]


def _series(side: SideResult) -> tuple[list[float], list[float]]:
    return [float(v) for v in side.first], [float(v) for v in side.second]


def run_chart(run: BenchRun, threads: int | None = None) -> Markup:
    """Every program of every side on one scale (base against head, the language against C), drawn by the
    charts adapter; empty before the first sample."""
    result = run.result
    names = _names(result, threads)
    groups = []
    for side in result.sides:
        first, second = _series(side)
        groups.append((bench_view.side_label(side), [(names[0], first), (names[1], second)]))
    # each side's ratio with its 95% interval in the chart's own title: the answer read beside the samples
    ratio_name = bench_view.column_names(result, threads)[2].split(" [")[0]
    ratios = ", ".join(f"{row.side} {row.ratio_text}" for row in bench_view.side_rows(result, run.purpose)
                       if row.point is not None)
    measure = wording.measure_words(result.measure)
    title = f"bench run {run.id}: {run.slug}" + (f"; {ratio_name} in {measure}: {ratios}" if ratios else "")
    return Markup(charts.sides_chart(groups, title, y_label=result_unit(result).axis))


def scaling(run: BenchRun) -> dict:
    """A swept par run's curve (SVG, the ideal line beside each side's) and its rows; empty otherwise."""
    tables = scaling_view.scaling_tables(run.result)
    curves = [(f"{t.side}", [(r.threads, *r.speedup) for r in t.rows]) for t in tables]
    claimed = next((r.threads for t in tables for r in t.rows if r.claimed), None)
    chart = charts.scaling_chart(curves, claimed, f"bench run {run.id}: {run.slug} speedup by threads")
    return {"chart": Markup(chart), "tables": tables}


def sample_tables(run: BenchRun, threads: int | None = None) -> dict:
    """Column names, the unit of every value and, per side, each pair of samples with its ratio, for the run
    page's tables."""
    result = run.result
    sides = []
    for side in result.sides:
        first, second = _series(side)
        pairs = []
        for number, (a, b) in enumerate(zip(first, second, strict=False), start=1):
            # seq: language/C; par: one thread over N threads, the speedup. Either way first over second.
            pairs.append({"n": number, "first": a, "second": b, "ratio": a / b if b else None})
        if pairs or side.output:  # a side that failed before its first pair has nothing to tabulate
            sides.append({"side": bench_view.side_label(side), "sha": side.sha, "pairs": pairs,
                          "output": side.output})
    first_name, second_name = _names(result, threads)
    ratio_name = bench_view.column_names(result, threads)[2].split(" [")[0]
    return {"first": first_name, "second": second_name, "ratio": "speedup" if result.par else ratio_name,
            "sides": sides, "rows": [row for row in bench_view.side_rows(result, run.purpose) if row.samples],
            "columns": bench_view.column_names(result, threads), "unit": result_unit(result)}


def milestones(summary: dict | None) -> list[dict]:
    """A digest summary's milestones, when it has them: name, done of total. Anything malformed is left out."""
    entries = (summary or {}).get("milestones") if isinstance(summary, dict) else None
    shown = []
    for entry in entries if isinstance(entries, list) else []:
        if not isinstance(entry, dict):
            continue
        try:
            done, total = float(entry.get("done", 0)), float(entry.get("total", 0))
        except (TypeError, ValueError):
            continue
        if total > 0:
            shown.append({"name": str(entry.get("name", "")), "done": done, "total": total,
                          "percent": max(0, min(100, round(100 * done / total))), "met": entry.get("met") is True})
    return shown


def summary_numbers(summary: dict | None) -> list[tuple[str, float]]:
    """The plain counts of a digest summary (new, fixes, ...), whatever keys the digest chose to keep."""
    if not isinstance(summary, dict):
        return []
    return [(str(key).replace("_", " "), value) for key, value in summary.items()
            if isinstance(value, (int, float)) and not isinstance(value, bool)]


def short(sha: str | None) -> str:
    return (sha or "")[:12]


def when(value) -> str:
    if value is None or value == "":
        return ""
    moment = datetime.fromisoformat(value) if isinstance(value, str) else value
    return moment.strftime("%Y-%m-%d %H:%M UTC")


def ratio(value) -> str:
    return "" if value is None else wording.ratio_text(value)


def number(value) -> str:
    return f"{value:g}" if isinstance(value, float) else str(value)


FILTERS: dict[str, Callable[..., str]] = {"short": short, "when": when, "ratio": ratio, "number": number,
                                          "title": title, "plural": plural}
