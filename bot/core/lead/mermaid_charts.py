"""The mermaid charts perfbot writes for GitHub (`pie showData`, `xychart-beta` with bars and lines), read back
as numbers so the dashboard can draw them itself: a browser page shows a picture, never the chart's source."""
from __future__ import annotations

import re
from dataclasses import dataclass

_QUOTED = re.compile(r'"([^"]*)"')
_PIE_SLICE = re.compile(r'^"([^"]*)"\s*:\s*([-+0-9.eE]+)$')
_AXIS = re.compile(r'^(x-axis|y-axis)\s*(?:"([^"]*)")?\s*(.*)$')
_SERIES = re.compile(r"^(bar|line)\s*\[(.*)\]$")
_RANGE = re.compile(r"^([-+0-9.eE]+)\s*-->\s*([-+0-9.eE]+)$")


@dataclass(frozen=True)
class PieChart:
    title: str
    slices: tuple[tuple[str, float], ...]


@dataclass(frozen=True)
class XYChart:
    title: str
    categories: tuple[str, ...]
    x_label: str
    y_label: str
    y_top: float | None
    series: tuple[tuple[str, tuple[float, ...]], ...]  # ("bar" | "line", one value per category)


def parse(source: str) -> PieChart | XYChart | None:
    """The chart a mermaid block describes, or None for any kind or shape perfbot does not write."""
    lines = [line.strip() for line in source.strip().splitlines() if line.strip() and not line.strip().startswith("%%")]
    if not lines:
        return None
    try:
        if lines[0].startswith("pie"):
            return _pie(lines)
        if lines[0] == "xychart-beta":
            return _xy(lines[1:])
    except ValueError:
        return None
    return None


def _title(line: str) -> str:
    text = line[len("title"):].strip()
    quoted = _QUOTED.fullmatch(text)
    return quoted.group(1) if quoted else text


def _pie(lines: list[str]) -> PieChart | None:
    title, slices = lines[0][3:].replace("showData", "").strip(), []
    for line in lines[1:]:
        if line.startswith("title"):
            title = _title(line)
            continue
        found = _PIE_SLICE.match(line)
        if found is None:
            raise ValueError(line)
        slices.append((found.group(1), float(found.group(2))))
    return PieChart(title, tuple(slices)) if slices else None


def _xy(lines: list[str]) -> XYChart | None:
    title, x_label, y_label, top = "", "", "", None
    categories: tuple[str, ...] = ()
    series: list[tuple[str, tuple[float, ...]]] = []
    for line in lines:
        if line.startswith("title"):
            title = _title(line)
        elif axis := _AXIS.match(line):
            name, label, rest = axis.groups()
            rest = rest.strip()
            if name == "x-axis":
                x_label = label or ""
                if rest.startswith("[") and rest.endswith("]"):
                    categories = tuple(_items(rest[1:-1]))
            else:
                y_label = label or ""
                if bounds := _RANGE.match(rest):
                    top = float(bounds.group(2))
        elif found := _SERIES.match(line):
            series.append((found.group(1), tuple(float(v) for v in _items(found.group(2)))))
        else:
            raise ValueError(line)
    if not series:
        return None
    count = max(len(values) for _, values in series)
    if not categories:
        categories = tuple(str(n) for n in range(1, count + 1))
    if any(len(values) != len(categories) for _, values in series):
        raise ValueError("a series does not match the x axis")
    return XYChart(title, categories, x_label, y_label, top, tuple(series))


def _items(text: str) -> list[str]:
    """`"a", "b"` or `1, 2.5`: quoted labels keep their commas."""
    quoted = _QUOTED.findall(text)
    if quoted:
        return quoted
    return [item.strip() for item in text.split(",") if item.strip()]
