"""Charts drawn on the server with matplotlib's SVG backend: plain numbers in, SVG text for inline HTML out."""
from __future__ import annotations

import hashlib
import io
import re
import textwrap
import threading
from collections.abc import Sequence
from functools import lru_cache

from bot.core.verify.claim_size import number

# Colour-blind-safe pairs (Okabe-Ito): the language / one thread, then C / N threads.
FIRST, SECOND, ACCENT, MUTED = "#d55e00", "#0072b2", "#009e73", "#999999"
# matplotlib's text and font caches are process-wide; one figure at a time keeps a threaded server safe.
_lock = threading.Lock()

_PROLOGUE = re.compile(r"\A.*?(?=<svg\b)", re.S)
_NAMESPACES = re.compile(r'\s+xmlns(?::xlink)?="[^"]*"')
_IDS = re.compile(r'(\bid="|xlink:href="#|url\(#)([^")]+)')


def times(value: float) -> str:
    """A ratio as every page writes it (one rounding rule: core/verify/claim_size.number): 218x, 9.2x, 1.43x."""
    return f"{number(value)}x"


def _figure(width: float, height: float):
    from matplotlib.figure import Figure  # imported here: only the dashboard pays matplotlib's start-up

    figure = Figure(figsize=(width, height), dpi=72, layout="constrained")
    figure.patch.set_alpha(0)
    return figure


def _plain(text: str) -> str:
    """Labels are data, never mathtext: a `$` must not switch matplotlib's math parser on."""
    return text.replace("\\", "\\\\").replace("$", r"\$")


def _title(axes, title: str, width: float) -> None:
    """A long title wraps to the figure's width instead of running off its edge (about 11 characters an inch)."""
    if title:
        axes.set_title(textwrap.fill(_plain(title), max(20, int(width * 11))), fontsize=10, loc="left")


def _style(axes) -> None:
    axes.spines[["top", "right"]].set_visible(False)
    axes.grid(axis="y", color="#e5e5e5", linewidth=0.8)
    axes.set_axisbelow(True)
    axes.tick_params(labelsize=9)


def _svg(figure, label: str, key: str) -> str:
    """The figure as SVG to put inside HTML: no XML prologue or DOCTYPE URL, namespaces left to the HTML parser,
    and every id prefixed so several charts on one page never share a clip path or glyph by accident."""
    buffer = io.StringIO()
    figure.savefig(buffer, format="svg", metadata={"Date": None, "Creator": None, "Format": None, "Type": None})
    svg = _NAMESPACES.sub("", _PROLOGUE.sub("", buffer.getvalue()), count=2)
    prefix = "c" + hashlib.sha1(key.encode()).hexdigest()[:10] + "-"
    svg = _IDS.sub(lambda m: m.group(1) + prefix + m.group(2), svg)
    return svg.replace("<svg ", f'<svg role="img" aria-label="{_attribute(label)}" class="chart" ', 1)


def _attribute(text: str) -> str:
    return text.replace("&", "&amp;").replace('"', "&quot;").replace("<", "&lt;").replace(">", "&gt;")


def sides_chart(groups: Sequence[tuple[str, Sequence[tuple[str, Sequence[float]]]]], title: str = "", *,
                y_label: str) -> str:
    """Every program of every side on one axis: the median as a bar, the spread of its samples (lowest to
    highest) as a whisker. Base against head, or the language against C, read on one scale; a log scale once
    the values span more than 20x, so a 40x gain shows as plainly as a 1.2x one. `groups` is (side, [(program,
    samples), ...]); `y_label` names what was measured (core/verify/units.py)."""
    frozen = tuple((side, tuple((name, tuple(sorted(map(float, values)))) for name, values in programs if values))
                   for side, programs in groups)
    frozen = tuple((side, programs) for side, programs in frozen if programs)
    return _sides_chart(frozen, title, y_label) if frozen else ""


@lru_cache(maxsize=256)
def _sides_chart(groups: tuple, title: str, y_label: str) -> str:
    # Cached by the numbers themselves: a finished run's samples never change, a running run's grow.
    import statistics

    with _lock:
        bars = [(side, name, values) for side, programs in groups for name, values in programs]
        width = max(3.6, 1.4 * len(bars) + 1.4)
        figure = _figure(width, 3.0)
        axes = figure.add_subplot()
        medians = [statistics.median(values) for *_, values in bars]
        lows = [m - values[0] for m, (*_, values) in zip(medians, bars, strict=True)]
        highs = [values[-1] - m for m, (*_, values) in zip(medians, bars, strict=True)]
        names = sorted({name for _, name, _ in bars}, key=[name for _, name, _ in bars].index)
        colours = [(FIRST, SECOND, ACCENT, MUTED)[names.index(name) % 4] for _, name, _ in bars]
        shown = axes.bar(range(len(bars)), medians, yerr=[lows, highs], color=colours, width=0.6, capsize=3,
                         error_kw={"elinewidth": 1, "ecolor": "#333333"})
        positive = [v for *_, values in bars for v in values if v > 0]
        if positive and max(positive) / min(positive) > 20:
            from matplotlib.ticker import FuncFormatter

            axes.set_yscale("log")
            plain = FuncFormatter(lambda value, _: f"{value:g}")  # 0.3, not 3 x 10^-1
            axes.yaxis.set_major_formatter(plain)
            axes.yaxis.set_minor_formatter(FuncFormatter(lambda value, _: ""))
        else:
            axes.set_ylim(bottom=0)
            axes.ticklabel_format(axis="y", style="plain", useOffset=False)  # 1200000, not 1.2 + 1e6
        axes.bar_label(shown, labels=[f"{m:.4g}" for m in medians], fontsize=7, padding=2)
        axes.set_xticks(range(len(bars)), [_plain(f"{side}\n{name}") for side, name, _ in bars], fontsize=8)
        axes.set_ylabel(_plain(f"median {y_label}; whisker: lowest to highest"), fontsize=9)
        _title(axes, title, width)
        _style(axes)
        return _svg(figure, title or "sides", f"sides {title} {y_label} {groups!r}")


def ratio_chart(labels: Sequence[str], ratios: Sequence[tuple[float | None, float, float | None]],
                threshold: float = 2.0, title: str = "", x_label: str = "measured ratio") -> str:
    """Horizontal bars of measured ratios with their 95% intervals, worst on top, on a log axis (0.02x and 1000x
    both readable), the near-C threshold dashed. Only measured figures reach it: a claim is never drawn."""
    if not labels:
        return ""
    return _ratio_chart(tuple(labels), tuple((lo, float(pt), hi) for lo, pt, hi in ratios), float(threshold), title,
                        x_label)


@lru_cache(maxsize=64)
def _ratio_chart(labels: tuple[str, ...], ratios: tuple, threshold: float, title: str, x_label: str) -> str:
    with _lock:
        figure = _figure(5.8, 0.32 * len(labels) + 1.4)
        axes = figure.add_subplot()
        rows = list(range(len(labels)))[::-1]
        points = [pt for _, pt, _ in ratios]
        colours = [FIRST if pt > threshold else ACCENT for pt in points]
        low = [pt - (lo if lo is not None else pt) for lo, pt, _ in ratios]
        high = [(hi if hi is not None else pt) - pt for _, pt, hi in ratios]
        axes.set_xscale("log")
        bars = axes.barh(rows, points, color=colours, height=0.6, xerr=[low, high], capsize=2,
                         error_kw={"elinewidth": 1, "ecolor": "#333333"})
        axes.bar_label(bars, labels=[times(pt) for pt in points], fontsize=8, padding=4)
        axes.set_yticks(rows, [_plain(label) for label in labels])
        axes.axvline(threshold, color=MUTED, linestyle="--", linewidth=1)
        values = [v for lo, pt, hi in ratios for v in (lo, pt, hi) if v]
        axes.set_xlim(min(0.5, min(values) / 2, threshold / 2), max(2 * threshold, max(values) * 4))
        axes.xaxis.set_major_formatter(_times_formatter())
        axes.set_xlabel(_plain(f"{x_label} (x, log scale); dashed: {times(threshold)}"), fontsize=9)
        if title:
            axes.set_title(_plain(title), fontsize=10, loc="left")
        _style(axes)
        axes.grid(axis="y", visible=False)
        axes.grid(axis="x", color="#e5e5e5", linewidth=0.8)
        return _svg(figure, title or "ratios", f"ratios {title} {labels!r} {ratios!r} {threshold} {x_label}")


def _times_formatter():
    from matplotlib.ticker import FuncFormatter

    return FuncFormatter(lambda value, _: times(value) if value > 0 else "")


def scaling_chart(curves: Sequence[tuple[str, Sequence[tuple[int, float, float, float]]]], claimed: int | None = None,
                  title: str = "") -> str:
    """Speedup by thread count: one line per side with its 95% band, the ideal line dashed, the claim marked.
    `curves` is (side, [(threads, low, point, high), ...]); the x axis is the real counts, evenly or not."""
    frozen = tuple((side, tuple((int(n), float(lo), float(pt), float(hi)) for n, lo, pt, hi in points))
                   for side, points in curves if points)
    return _scaling_chart(frozen, claimed, title) if frozen else ""


@lru_cache(maxsize=128)
def _scaling_chart(curves: tuple, claimed: int | None, title: str) -> str:
    with _lock:
        figure = _figure(5.2, 3.2)
        axes = figure.add_subplot()
        counts = sorted({n for _, points in curves for n, *_ in points})
        axes.plot(counts, counts, color=MUTED, linestyle="--", linewidth=1, label="ideal")
        for (side, points), colour, marker in zip(curves, (SECOND, FIRST, ACCENT), ("o", "s", "^"), strict=False):
            threads = [p[0] for p in points]
            axes.fill_between(threads, [p[1] for p in points], [p[3] for p in points], color=colour, alpha=0.18,
                              linewidth=0)
            axes.plot(threads, [p[2] for p in points], color=colour, marker=marker, markersize=4, linewidth=1.4,
                      label=_plain(side))
        if claimed is not None:
            axes.axvline(claimed, color=ACCENT, linestyle=":", linewidth=1)
        axes.set_xticks(counts, [str(n) for n in counts])
        axes.set_xlim(0, max(counts) * 1.05 + 0.5)
        # Nothing clipped: a band past the ideal (a noisy or mismeasured sweep) is drawn whole, and said there.
        highest = max(p[3] for _, points in curves for p in points)
        axes.set_ylim(0, max(max(counts), highest) * 1.1)
        above = f"speedup above the ideal line (up to {highest:.2f}x): noisy or mismeasured" \
            if highest > max(counts) else ""
        if above:
            axes.text(0.98, 0.02, above, transform=axes.transAxes, ha="right", va="bottom", fontsize=8, color=ACCENT)
        axes.set_xlabel("threads" + (f" (dotted: the claim, {claimed})" if claimed is not None else ""), fontsize=9)
        axes.set_ylabel("speedup over 1 thread (x)", fontsize=9)
        if title:
            axes.set_title(_plain(title), fontsize=10, loc="left")
        _style(axes)
        axes.legend(fontsize=8, frameon=False, loc="upper left")
        label = "; ".join(part for part in (title or "scaling", above) if part)
        return _svg(figure, label, f"scaling {title} {curves!r} {claimed}")


def pie_chart(slices: Sequence[tuple[str, float]], title: str = "") -> str:
    """A mermaid `pie showData` drawn here: each slice labelled with its name and its count."""
    frozen = tuple((str(name), float(value)) for name, value in slices if value > 0)
    return _pie_chart(frozen, title) if frozen else ""


@lru_cache(maxsize=64)
def _pie_chart(slices: tuple, title: str) -> str:
    with _lock:
        figure = _figure(4.6, 2.8)
        axes = figure.add_subplot()
        colours = (SECOND, FIRST, ACCENT, "#cc79a7", "#e69f00", "#56b4e9", "#f0e442", MUTED)
        axes.pie([v for _, v in slices], labels=[f"{_plain(name)} ({v:g})" for name, v in slices],
                 colors=[colours[i % len(colours)] for i in range(len(slices))], startangle=90, counterclock=False,
                 wedgeprops={"linewidth": 1, "edgecolor": "white"}, textprops={"fontsize": 8})
        axes.set_aspect("equal")
        _title(axes, title, 4.6)
        return _svg(figure, title or "pie chart", f"pie {title} {slices!r}")


def xy_chart(categories: Sequence[str], series: Sequence[tuple[str, Sequence[float]]], title: str = "",
             x_label: str = "", y_label: str = "", y_top: float | None = None) -> str:
    """A mermaid `xychart-beta` drawn here: bars overlaid as mermaid draws them (the first at the back, each
    next one narrower in front), lines on top."""
    frozen = tuple((kind, tuple(float(v) for v in values)) for kind, values in series if values)
    if not frozen or not categories:
        return ""
    return _xy_chart(tuple(map(str, categories)), frozen, title, x_label, y_label, y_top)


@lru_cache(maxsize=64)
def _xy_chart(categories: tuple, series: tuple, title: str, x_label: str, y_label: str, y_top: float | None) -> str:
    with _lock:
        width = max(4.2, 0.7 * len(categories) + 1.6)
        figure = _figure(width, 3.0)
        axes = figure.add_subplot()
        places = range(len(categories))
        axes.set_xlim(-0.5 - max(0, 3 - len(categories)) / 2, len(categories) - 0.5 + max(0, 3 - len(categories)) / 2)
        bars = [values for kind, values in series if kind == "bar"]
        for number, values in enumerate(bars):
            shown = axes.bar(places, values, width=0.7 * 0.6 ** number, color=(SECOND, FIRST, ACCENT)[number % 3])
            axes.bar_label(shown, fmt="%g", fontsize=7, padding=1)
        for number, values in enumerate(values for kind, values in series if kind == "line"):
            axes.plot(places, values, color=(FIRST, SECOND, ACCENT, MUTED)[number % 4], marker="o", markersize=3,
                      linewidth=1.2)
        axes.set_xticks(places, [_plain(c) for c in categories], rotation=30 if len(categories) > 4 else 0,
                        ha="right" if len(categories) > 4 else "center")
        if y_top:
            axes.set_ylim(0, y_top)
        axes.set_xlabel(_plain(x_label), fontsize=9)
        axes.set_ylabel(_plain(y_label), fontsize=9)
        _title(axes, title, width)
        _style(axes)
        return _svg(figure, title or "chart", f"xy {title} {categories!r} {series!r} {x_label} {y_label} {y_top}")
