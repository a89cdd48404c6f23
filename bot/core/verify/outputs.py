"""Comparing two programs' outputs by the project's rule, and reading the numbers a runtime prints about itself."""
from __future__ import annotations

import re

from bot.core.config.run import Run


def normalised(text: str, settings: Run) -> str:
    """The output as the rule sees it. `exact` still trims surrounding blank space, as verification always did."""
    if settings.output == "last-line":
        lines = [line for line in text.splitlines() if line.strip()]
        return lines[-1].strip() if lines else ""
    if settings.output == "normalize":
        for pattern, replacement in settings.normalize:
            text = re.sub(pattern, replacement, text)
    return text.strip()


def rule_text(settings: Run) -> str:
    if settings.output == "normalize":
        steps = "; ".join(f"s/{p}/{r}/" for p, r in settings.normalize)
        return f"output = \"normalize\" ({steps})"
    return f"output = \"{settings.output}\""


def mismatch(first: str, second: str, settings: Run, names: tuple[str, str], where: str) -> str | None:
    """None when the outputs agree under the rule; else a message with both outputs as compared and the rule."""
    a, b = normalised(first, settings), normalised(second, settings)
    if a == b:
        return None
    return (f"{where} {names[0]} prints {_shown(a)} but {names[1]} prints {_shown(b)} (after {rule_text(settings)}): "
            "not the same computation")


def metrics_of(stdout: str, stderr: str, settings: Run) -> dict[str, float]:
    """Each configured metric's number from the run's output (stdout first, then stderr); absent ones are left out."""
    found = {}
    for name, pattern in settings.metrics:
        match = re.search(pattern, stdout) or re.search(pattern, stderr)
        if match:
            number = _number(match.group(1) if match.groups() else match.group(0))
            if number is not None:
                found[name] = number
    return found


def _number(text: str) -> float | None:
    try:
        return float(text.replace(",", "").replace("_", "").strip())
    except ValueError:
        return None


def _shown(text: str, limit: int = 160) -> str:
    return repr(text if len(text) <= limit else text[:limit] + "…")
