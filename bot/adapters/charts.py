"""Charts drawn on the server with matplotlib's SVG backend: plain numbers in, SVG text for inline HTML out."""
from __future__ import annotations

import hashlib
import io
import re
import threading
from functools import lru_cache
from typing import Sequence

# Colour-blind-safe pairs (Okabe-Ito): the language / one thread, then C / N threads.
FIRST, SECOND, ACCENT, MUTED = "#d55e00", "#0072b2", "#009e73", "#999999"
# matplotlib's text and font caches are process-wide; one figure at a time keeps a threaded server safe.
_lock = threading.Lock()

_PROLOGUE = re.compile(r"\A.*?(?=<svg\b)", re.S)
_NAMESPACES = re.compile(r'\s+xmlns(?::xlink)?="[^"]*"')
_IDS = re.compile(r'(\bid="|xlink:href="#|url\(#)([^")]+)')


def times(value: float) -> str:
    """A ratio as people read it: 63.6x, 9.80x, 1.14x, 120x."""
    return f"{value:.0f}x" if value >= 100 else f"{value:.1f}x" if value >= 10 else f"{value:.2f}x"


def _figure(width: float, height: float):
    from matplotlib.figure import Figure  # imported here: only the dashboard pays matplotlib's start-up

    figure = Figure(figsize=(width, height), dpi=72, layout="constrained")
    figure.patch.set_alpha(0)
    return figure


def _plain(text: str) -> str:
    """Labels are data, never mathtext: a `$` must not switch matplotlib's math parser on."""
    return text.replace("\\", "\\\\").replace("$", r"\$")


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


def samples_chart(sides: Sequence[tuple[str, Sequence[float], Sequence[float]]], names: tuple[str, str],
                  title: str = "") -> str:
    """One panel per side (base, head): each sample pair's seconds for the two programs, in the order taken."""
    frozen = tuple((side, tuple(map(float, a)), tuple(map(float, b))) for side, a, b in sides)
    return _samples_chart(frozen, tuple(names), title) if frozen else ""


@lru_cache(maxsize=256)
def _samples_chart(sides: tuple, names: tuple[str, str], title: str) -> str:
    # Cached by the numbers themselves: a finished run's samples never change, a running run's grow.
    with _lock:
        figure = _figure(4.2 * len(sides) + 0.6, 2.9)
        panels = figure.subplots(1, len(sides), squeeze=False)[0]
        for axes, (side, first, second) in zip(panels, sides):
            for values, colour, marker, name in ((first, FIRST, "o", names[0]), (second, SECOND, "s", names[1])):
                axes.plot(range(1, len(values) + 1), values, color=colour, marker=marker, markersize=3.5,
                          linewidth=1.2, label=_plain(name))
            axes.set_title(_plain(side), fontsize=10, loc="left")
            axes.set_xlabel("sample pair", fontsize=9)
            axes.set_ylim(bottom=0)
            axes.xaxis.get_major_locator().set_params(integer=True)
            _style(axes)
        panels[0].set_ylabel("seconds", fontsize=9)
        figure.legend(*panels[0].get_legend_handles_labels(), loc="outside upper right", ncols=2, fontsize=8,
                      frameon=False)
        return _svg(figure, title or "samples", f"samples {title} {sides!r}")


def bar_chart(labels: Sequence[str], values: Sequence[float], title: str = "") -> str:
    """Vertical bars, one per label (e.g. records per state)."""
    if not labels:
        return ""
    return _bar_chart(tuple(labels), tuple(float(v) for v in values), title)


@lru_cache(maxsize=64)
def _bar_chart(labels: tuple[str, ...], values: tuple[float, ...], title: str) -> str:
    with _lock:
        figure = _figure(max(3.0, 0.62 * len(labels) + 1.0), 2.6)
        axes = figure.add_subplot()
        bars = axes.bar(range(len(labels)), values, color=SECOND, width=0.6)
        axes.bar_label(bars, fmt="%g", fontsize=8, padding=2)
        axes.set_xticks(range(len(labels)), [_plain(label) for label in labels])
        axes.set_ylim(0, max(values + (1.0,)) * 1.2)
        axes.yaxis.get_major_locator().set_params(integer=True)
        if title:
            axes.set_title(_plain(title), fontsize=10, loc="left")
        _style(axes)
        return _svg(figure, title or "bar chart", f"bars {title} {labels!r} {values!r}")


def ratio_chart(labels: Sequence[str], ratios: Sequence[float], threshold: float = 2.0, title: str = "") -> str:
    """Horizontal bars of language/C ratios, worst on top, with the near-C threshold as a dashed line."""
    if not labels:
        return ""
    return _ratio_chart(tuple(labels), tuple(float(r) for r in ratios), float(threshold), title)


@lru_cache(maxsize=64)
def _ratio_chart(labels: tuple[str, ...], ratios: tuple[float, ...], threshold: float, title: str) -> str:
    with _lock:
        figure = _figure(5.0, 0.3 * len(labels) + 1.0)
        axes = figure.add_subplot()
        rows = range(len(labels))[::-1]
        colours = [FIRST if ratio > threshold else ACCENT for ratio in ratios]
        bars = axes.barh(list(rows), ratios, color=colours, height=0.6)
        axes.bar_label(bars, labels=[times(r) for r in ratios], fontsize=8, padding=2)
        axes.set_yticks(list(rows), [_plain(label) for label in labels])
        axes.axvline(threshold, color=MUTED, linestyle="--", linewidth=1)
        axes.set_xlim(0, max(ratios + (threshold,)) * 1.18)
        axes.set_xlabel("language / C (x)", fontsize=9)
        if title:
            axes.set_title(_plain(title), fontsize=10, loc="left")
        _style(axes)
        axes.grid(axis="y", visible=False)
        axes.grid(axis="x", color="#e5e5e5", linewidth=0.8)
        return _svg(figure, title or "ratios", f"ratios {title} {labels!r} {ratios!r} {threshold}")


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
        for (side, points), colour, marker in zip(curves, (SECOND, FIRST, ACCENT), ("o", "s", "^")):
            threads = [p[0] for p in points]
            axes.fill_between(threads, [p[1] for p in points], [p[3] for p in points], color=colour, alpha=0.18,
                              linewidth=0)
            axes.plot(threads, [p[2] for p in points], color=colour, marker=marker, markersize=4, linewidth=1.4,
                      label=_plain(side))
        if claimed is not None:
            axes.axvline(claimed, color=ACCENT, linestyle=":", linewidth=1)
        axes.set_xticks(counts, [str(n) for n in counts])
        axes.set_xlim(0, max(counts) * 1.05 + 0.5)
        axes.set_ylim(0, max(counts) * 1.1)
        axes.set_xlabel("threads" + (f" (dotted: the claim, {claimed})" if claimed is not None else ""), fontsize=9)
        axes.set_ylabel("speedup over 1 thread (x)", fontsize=9)
        if title:
            axes.set_title(_plain(title), fontsize=10, loc="left")
        _style(axes)
        axes.legend(fontsize=8, frameon=False, loc="upper left")
        return _svg(figure, title or "scaling", f"scaling {title} {curves!r} {claimed}")
