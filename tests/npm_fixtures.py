"""Finds the npm packages the GitHub double is built on, installed by `scripts/ensure-npm-fixtures`.

- `@octokit/openapi`: GitHub's official OpenAPI description of the REST API (api.github.com and GHES).
- `@octokit/webhooks-examples`: GitHub's example webhook payloads, per event.

They live in tests/.npm (ignored by git). Parsed JSON is cached for the process: the REST description
alone is 13 MB and takes ~0.2 s to parse.
"""
from __future__ import annotations

import copy
import functools
import json
from pathlib import Path
from typing import Any

NPM_ROOT = Path(__file__).resolve().parent / ".npm" / "node_modules" / "@octokit"
OPENAPI_DIR = NPM_ROOT / "openapi" / "generated"
WEBHOOK_EXAMPLES_INDEX = NPM_ROOT / "webhooks-examples" / "api.github.com" / "index.json"


class NpmFixturesMissing(RuntimeError):
    """The npm packages are not installed: run scripts/ensure-npm-fixtures."""


def _require(path: Path) -> Path:
    if not path.is_file():
        raise NpmFixturesMissing(
            f"{path} is missing: run scripts/ensure-npm-fixtures (installs @octokit/openapi and "
            "@octokit/webhooks-examples into tests/.npm with npm)")
    return path


def openapi_path() -> Path:
    """GitHub's REST API description for api.github.com (and a check that the GHES ones came along)."""
    if not list(OPENAPI_DIR.glob("ghes-*.json")):
        raise NpmFixturesMissing(f"no ghes-*.json in {OPENAPI_DIR}: run scripts/ensure-npm-fixtures")
    return _require(OPENAPI_DIR / "api.github.com.json")


def ghes_openapi_paths() -> list[Path]:
    """The GitHub Enterprise Server descriptions, oldest version first (ghes-3.17.json, ...)."""
    openapi_path()
    return sorted(OPENAPI_DIR.glob("ghes-*.json"), key=lambda p: tuple(int(n) for n in p.stem[5:].split(".")))


@functools.lru_cache(maxsize=1)
def openapi_document() -> dict[str, Any]:
    """The parsed api.github.com description; shared, so treat it as read-only."""
    with open(openapi_path(), "rb") as handle:
        return json.load(handle)


@functools.lru_cache(maxsize=1)
def _webhook_index() -> dict[str, dict[str, Any]]:
    with open(_require(WEBHOOK_EXAMPLES_INDEX), "rb") as handle:
        return {entry["name"]: entry for entry in json.load(handle)}


def webhook_events() -> list[str]:
    """Every event name that has examples, e.g. "issue_comment", "issues", "push"."""
    return sorted(_webhook_index())


def webhook_examples(event: str) -> list[dict[str, Any]]:
    """GitHub's example payloads for one event (a fresh copy each call, so a test may edit it)."""
    index = _webhook_index()
    if event not in index:
        raise KeyError(f"no webhook examples for event {event!r}; known events: {', '.join(sorted(index))}")
    return copy.deepcopy(index[event]["examples"])
