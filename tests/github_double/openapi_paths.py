"""Finds which documented operation a request is: method + raw path -> path template and variables.

openapi-core's own finder tries all 811 templates of GitHub's description with a parser per request
(about 2 ms); `RouteIndex` compares segments of the templates with the same number of segments (~20 us).
The double routes by the template found here, so a handler can only exist for a documented operation.

Rules: a literal segment beats a variable (`/issues/comments` is not issue number "comments"); a variable
matches one segment, except `path`, `ref` and `branch`, which may hold slashes (contents paths, git refs).
"""
from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import unquote

HTTP_METHODS = ("get", "post", "put", "patch", "delete")
_VARIABLE = re.compile(r"\{[^}]+\}")
_VARIABLE_SPLIT = re.compile(r"(\{[^}]+\})")
_SLASHED_VARIABLES = {"path", "ref", "branch"}


class UnknownOperation(Exception):
    """The method and path name no operation in GitHub's description."""


@dataclass(frozen=True)
class Operation:
    """A documented operation the request matched, with its path variables (percent-decoded)."""

    method: str  # upper case, e.g. "POST"
    template: str  # e.g. "/repos/{owner}/{repo}/issues/{issue_number}"
    variables: dict[str, str] = field(default_factory=dict)

    @property
    def key(self) -> tuple[str, str]:
        return self.method, self.template


class _Template:
    """One path template split into segments: a literal string, None for a whole-segment variable, or a
    compiled pattern for a mixed segment such as ``{base}...{head}``."""

    def __init__(self, template: str, methods: set[str]) -> None:
        self.template = template
        self.methods = methods
        self.names = [name[1:-1] for name in _VARIABLE.findall(template)]
        self.segments: list[str | re.Pattern | None] = []
        for segment in template.split("/")[1:]:
            if not _VARIABLE.search(segment):
                self.segments.append(segment)
            elif _VARIABLE.fullmatch(segment):
                self.segments.append(None)
            else:
                pieces = _VARIABLE_SPLIT.split(segment)  # odd indices are the variables
                pattern = "".join("(.+?)" if i % 2 else re.escape(piece) for i, piece in enumerate(pieces))
                self.segments.append(re.compile(pattern + "$"))
        # More literal segments win: /repos/{o}/{r}/issues/comments beats /repos/{o}/{r}/issues/{number}.
        self.specificity = sum(isinstance(s, str) for s in self.segments)
        # File paths and git refs may hold slashes; such templates are tried when no per-segment match exists.
        pieces = _VARIABLE_SPLIT.split(template)
        self.spanning = None
        if any(piece[1:-1] in _SLASHED_VARIABLES for piece in pieces[1::2]):
            self.spanning = re.compile("".join(
                f"({'.+' if piece[1:-1] in _SLASHED_VARIABLES else '[^/]+'})" if i % 2 else re.escape(piece)
                for i, piece in enumerate(pieces)) + "$")

    def match_segments(self, parts: list[str]) -> list[str] | None:
        values: list[str] = []
        for expected, actual in zip(self.segments, parts, strict=False):
            if expected is None:
                if not actual:
                    return None
                values.append(actual)
            elif isinstance(expected, str):
                if expected != actual:
                    return None
            else:
                found = expected.match(actual)
                if not found:
                    return None
                values.extend(found.groups())
        return values

    def match_spanning(self, raw_path: str) -> list[str] | None:
        found = self.spanning.match(raw_path) if self.spanning else None
        return list(found.groups()) if found else None


class RouteIndex:
    """Finds the documented operation for a method and a raw (still percent-encoded) path."""

    def __init__(self, paths: Mapping[str, Mapping[str, Any]]) -> None:
        self.templates = [_Template(t, {m.upper() for m in item if m in HTTP_METHODS}) for t, item in paths.items()]
        self.templates.sort(key=lambda t: -t.specificity)
        self._by_length: dict[int, list[_Template]] = {}
        for template in self.templates:
            self._by_length.setdefault(len(template.segments), []).append(template)

    def match(self, method: str, raw_path: str) -> Operation:
        parts = raw_path.split("/")[1:]
        candidates = [(t, values) for t in self._by_length.get(len(parts), ())
                      if (values := t.match_segments(parts)) is not None]
        if not candidates:
            candidates = [(t, values) for t in self.templates if (values := t.match_spanning(raw_path)) is not None]
        if not candidates:
            raise UnknownOperation(f"{method} {raw_path}: no such path in GitHub's REST API description")
        for template, values in candidates:
            if method in template.methods:
                variables = {name: unquote(value) for name, value in zip(template.names, values, strict=False)}
                return Operation(method, template.template, variables)
        allowed = ", ".join(sorted(candidates[0][0].methods))
        raise UnknownOperation(f"{method} {candidates[0][0].template}: method not documented (documented: {allowed})")

    def __contains__(self, key: tuple[str, str]) -> bool:
        method, template = key
        return any(t.template == template and method in t.methods for t in self.templates)
