"""Finds the npm packages the GitHub double is built on, installed by `scripts/ensure-npm-fixtures`.

- `@octokit/openapi`: GitHub's official OpenAPI description of the REST API (api.github.com and GHES).
- `@octokit/webhooks-examples`: GitHub's example webhook payloads, per event (api.github.com and GHES).
- `@octokit/webhooks-schemas`: the JSON schema of every webhook event, whose names the header check must take.

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
WEBHOOK_EXAMPLES_DIR = NPM_ROOT / "webhooks-examples"
WEBHOOK_EXAMPLES_INDEX = WEBHOOK_EXAMPLES_DIR / "api.github.com" / "index.json"
WEBHOOK_SCHEMA = NPM_ROOT / "webhooks-schemas" / "schema.json"


class NpmFixturesMissing(RuntimeError):
    """The npm packages are not installed: run scripts/ensure-npm-fixtures."""


def _require(path: Path) -> Path:
    if not path.is_file():
        raise NpmFixturesMissing(
            f"{path} is missing: run scripts/ensure-npm-fixtures (installs @octokit/openapi and "
            "@octokit/webhooks-examples and @octokit/webhooks-schemas into tests/.npm with npm)")
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


def webhook_example_sets() -> dict[str, dict[str, list[dict[str, Any]]]]:
    """Every example of every event, per target: {"api.github.com": {event: [payload, ...]}, "ghes-35": ...}.
    The GHES sets hold events github.com lacks (enterprise, user, cache_sync, content_reference)."""
    _require(WEBHOOK_EXAMPLES_INDEX)
    sets = {}
    for index in sorted(WEBHOOK_EXAMPLES_DIR.glob("*/index.json")):
        with open(index, "rb") as handle:
            sets[index.parent.name] = {entry["name"]: entry["examples"] for entry in json.load(handle)}
    return sets


def webhook_schema_event_names() -> list[str]:
    """The events @octokit/webhooks-schemas describes: its top-level oneOf names one definition per event,
    `<event>_event` for events with actions and `<event>$event` for the others."""
    with open(_require(WEBHOOK_SCHEMA), "rb") as handle:
        schema = json.load(handle)
    names = []
    for choice in schema["oneOf"]:
        definition = choice["$ref"].rsplit("/", 1)[-1]
        names.append(definition.removesuffix("$event") if definition.endswith("$event")
                     else definition.removesuffix("_event"))
    return sorted(names)


@functools.lru_cache(maxsize=1)
def _openapi_webhooks() -> tuple[dict[str, Any], ...]:
    """The `post` operation of every entry under `x-webhooks`, from api.github.com and every GHES version."""
    operations = []
    for path in [openapi_path(), *ghes_openapi_paths()]:
        with open(path, "rb") as handle:
            operations.extend(hook["post"] for hook in json.load(handle)["x-webhooks"].values())
    return tuple(operations)


def openapi_webhook_event_names() -> list[str]:
    """The event of every webhook in GitHub's own descriptions: each entry's `x-github.subcategory` (its
    X-GitHub-Event example is not reliable: `project-v2-item` for projects_v2_item)."""
    return sorted({operation["x-github"]["subcategory"] for operation in _openapi_webhooks()})


def openapi_webhook_header_examples(header: str) -> list[str]:
    """Every example value GitHub's descriptions give for one delivery header (e.g. X-GitHub-Delivery)."""
    return sorted({str(p["example"]) for operation in _openapi_webhooks() for p in operation["parameters"]
                   if p["name"].lower() == header.lower() and "example" in p})
