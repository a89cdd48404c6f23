"""Jinja templates (package data): every text perfbot writes starts in bot/templates/ or in the templates/ folder
of a feature package (bot/digest/, bot/bisect/), kept beside the code that fills it."""
from __future__ import annotations

from functools import lru_cache
from importlib import resources

from jinja2 import ChoiceLoader, Environment, PackageLoader, StrictUndefined

from bot.core.tracker.untrusted import cell, fenced, no_links, quiet_mentions, unlinked

# Every feature package (ARCHITECTURE.md): tests/test_feature_packages.py holds each to the contracts, and one
# with a templates/ folder keeps its templates there, beside its modules; a name is found once.
FEATURE_PACKAGES = ("bot.digest", "bot.parity", "bot.bisect")


def templated(folder: str = "templates") -> tuple[str, ...]:
    """The feature packages that hold `folder` (templates, or templates/web for the dashboard's pages)."""
    return tuple(package for package in FEATURE_PACKAGES
                 if resources.files(package).joinpath(*folder.split("/")).is_dir())


@lru_cache(maxsize=1)
def environment() -> Environment:
    # StrictUndefined: a template asking for a value nobody passed is a bug, not an empty string.
    env = Environment(
        # Found wherever the package is: a checkout or a wheel.
        loader=ChoiceLoader([PackageLoader(package, "templates") for package in ("bot", *templated())]),
        undefined=StrictUndefined,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
        autoescape=False,
    )
    env.filters["quiet"] = quiet_mentions  # untrusted text outside a fence: its @mentions ping nobody
    env.filters["fenced"] = fenced  # untrusted text whole, inside a fold or not: nothing in it is markup
    env.filters["cell"] = cell  # untrusted text in a table cell
    env.filters["unlinked"] = unlinked  # an LLM's words: no markup, mention or link
    env.filters["no_links"] = no_links  # findings, an agent's among them: code kept, no mention or link
    return env


def render(name: str, **context) -> str:
    return environment().get_template(name).render(**context)
