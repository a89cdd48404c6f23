"""Checks each request the double receives against GitHub's official OpenAPI description.

Two steps, both against `api.github.com.json` from the npm package `@octokit/openapi`:

1. `openapi_paths.RouteIndex` finds the operation: method and path template (``/repos/{owner}/{repo}/issues``).
2. openapi-core validates that operation's path and query parameters and the JSON body against its
   `requestBody` schema. Its own validation of the description is switched off: it takes 16 s on GitHub's
   13 MB file, while parsing the JSON and building the `SchemaPath` takes about 0.6 s, once per process.
   Each parameter's verdict is remembered per raw value, so a repeated request costs ~0.1-0.5 ms.

On demand (`GitHubDouble(validate_responses=True)`) it also checks the double's own 2xx JSON responses.

Problems come back as readable strings, e.g.
``POST /repos/{owner}/{repo}/labels: body: 'name' is a required property``.
"""
from __future__ import annotations

import functools
import json
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from jsonschema_path import SchemaPath
from openapi_core import V30RequestValidator
from openapi_core.datatypes import Parameters, RequestParameters
from openapi_core.templating.datatypes import TemplateResult
from openapi_core.templating.paths.datatypes import PathOperationServer
from openapi_core.validation.request.exceptions import MissingParameter, ParametersError, ParameterValidationError
from openapi_core.validation.response.validators import V30ResponseDataValidator
from werkzeug.datastructures import Headers, ImmutableMultiDict

from tests.npm_fixtures import openapi_path

from .openapi_paths import Operation, RouteIndex, UnknownOperation


def _labels_object(body: Any) -> Any:
    if isinstance(body, str):
        body = [body]
    if isinstance(body, list):
        return {"labels": body} if body else None  # None: skip the check (the text allows [] to clear labels)
    return body


# Bodies GitHub's description allows in its text but not in its schema, rewritten to the schema's form before
# the check. PyGithub sends them: Issue.add_to_labels and Issue.set_labels post a bare array of names, which
# the text of both operations allows ("you can also pass an array of labels directly").
_BODY_FORMS_ALLOWED_BY_THE_TEXT = {
    ("POST", "/repos/{owner}/{repo}/issues/{issue_number}/labels"): _labels_object,
    ("PUT", "/repos/{owner}/{repo}/issues/{issue_number}/labels"): _labels_object,
}


class _RequestValidator(V30RequestValidator):
    """openapi-core's request validator, told which operation matched instead of searching for it, checking
    only the parameters a request sends (plus the required ones), and remembering each parameter's verdict."""

    operation: tuple[str, str] = ("", "")  # set per request, under RequestChecker's lock
    declared: tuple[tuple[int, str, str, bool], ...] = ()  # (index, name, in, required) of its parameters

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # (operation, parameter index, raw value) -> (True, value) or (False, error). A verdict depends only
        # on the parameter's schema and the raw value, and tests repeat values ({owner}, {repo}) constantly.
        self._verdicts: dict[tuple, tuple[bool, Any]] = {}

    def _find_path(self, request):  # the RouteIndex already found it
        return request.found

    def _get_parameters(self, parameters, operation, path):
        # openapi-core builds a deserializer for every documented parameter, sent or not (~0.5 ms each;
        # GET /repos/{owner}/{repo}/issues documents 11). Absent optional ones hold nothing to check.
        validated, errors = Parameters(), []
        for index, name, location, required in self.declared:
            sent = parameters[location]
            if not required and name not in sent:
                continue
            raw = tuple(sent.getlist(name)) if location == "query" else sent.get(name)
            key = (self.operation, index, raw)
            if key not in self._verdicts:
                if len(self._verdicts) > 50_000:
                    self._verdicts.clear()
                try:
                    self._verdicts[key] = (True, self._get_parameter(parameters, operation / "parameters" / index))
                except MissingParameter:
                    continue
                except ParameterValidationError as error:
                    self._verdicts[key] = (False, error)
            valid, outcome = self._verdicts[key]
            if valid:
                getattr(validated, location)[name] = outcome
            else:
                errors.append(outcome)
        if errors:
            raise ParametersError(errors=errors, parameters=validated)
        return validated


class _ResponseValidator(V30ResponseDataValidator):
    def _find_path(self, request):
        return request.found


@dataclass
class _CheckedRequest:
    """The shape openapi-core reads (its `Request` protocol)."""

    method: str
    path: str
    parameters: RequestParameters
    body: bytes | None
    content_type: str
    found: PathOperationServer
    host_url: str = "https://api.github.com"


@dataclass
class _CheckedResponse:
    status_code: int
    data: bytes | None
    content_type: str = "application/json"
    headers: dict = field(default_factory=dict)


class RequestChecker:
    """Matches and validates requests (and, on demand, responses); one per process, safe across threads."""

    def __init__(self, document: Mapping[str, Any]) -> None:
        self.routes = RouteIndex(document["paths"])
        self._document = document
        self._spec = SchemaPath.from_dict(document)
        self._requests = _RequestValidator(self._spec)
        self._responses = _ResponseValidator(self._spec)
        # openapi-core's caches are not documented as thread-safe, and `declared` is per request
        self._lock = threading.Lock()

    def check(self, method: str, raw_path: str, query: ImmutableMultiDict, headers: Headers,
              body: bytes | None, content_type: str | None) -> tuple[Operation | None, list[str]]:
        """The matched operation (None if unknown) and the problems found (empty when the request is valid)."""
        try:
            operation = self.routes.match(method, raw_path)
        except UnknownOperation as unknown:
            return None, [str(unknown)]
        found, declared = self._operation(operation.template, operation.method)
        rewrite = _BODY_FORMS_ALLOWED_BY_THE_TEXT.get(operation.key)
        if rewrite is not None and body:
            value = rewrite(json.loads(body))  # the server has already answered 400 to a body that is not JSON
            body = None if value is None else json.dumps(value).encode()
        request = _CheckedRequest(
            method.lower(), raw_path, RequestParameters(query=query, header=headers, path=operation.variables),
            body or None, (content_type or "application/json").lower(),
            found._replace(path_result=TemplateResult(operation.template, operation.variables)))
        with self._lock:
            self._requests.operation, self._requests.declared = operation.key, declared
            problems = list(self._requests.iter_errors(request))
        return operation, [f"{method} {operation.template}: {describe(problem)}" for problem in problems]

    def check_response(self, operation: Operation, status: int, body: bytes | None) -> list[str]:
        """Problems of a JSON response against the operation's documented response for that status."""
        found, _ = self._operation(operation.template, operation.method)
        request = _CheckedRequest(operation.method.lower(), operation.template, RequestParameters(), None, "", found)
        with self._lock:
            problems = list(self._responses.iter_errors(request, _CheckedResponse(status, body or None)))
        return [f"response {status} to {operation.method} {operation.template}: {describe(problem)}"
                for problem in problems]

    @functools.cache  # noqa: B019  (one checker per double, alive as long as its cache should be)
    def _operation(self, template: str, method: str) -> tuple[PathOperationServer, tuple[tuple[int, str, str, bool],
                                                                                         ...]]:
        path = self._spec / "paths" / template
        declared = []  # (index, name, in, required) of each parameter, `$ref`s into components resolved
        for index, parameter in enumerate(self._document["paths"][template][method.lower()].get("parameters", ())):
            while "$ref" in parameter:
                parameter = functools.reduce(lambda node, key: node[key], parameter["$ref"][2:].split("/"),
                                             self._document)
            declared.append((index, parameter["name"], parameter["in"], bool(parameter.get("required"))))
        return PathOperationServer(path, path / method.lower(), None, None, None), tuple(declared)


def describe(problem: Exception) -> str:
    """openapi-core nests the useful part (jsonschema's messages) in __cause__; say it in one line."""
    where = "body" if "body" in type(problem).__name__.lower() or "data" in type(problem).__name__.lower() else ""
    name = getattr(problem, "name", None)
    if name:
        where = f"{getattr(problem, 'location', 'parameter')} parameter '{name}'"
    cause = problem.__cause__ or problem
    schema_errors = getattr(cause, "schema_errors", None)
    if schema_errors:
        details = "; ".join(f"{'/'.join(map(str, e.absolute_path)) + ': ' if e.absolute_path else ''}{e.message}"
                            for e in schema_errors)
        return f"{where or 'value'}: {details}"
    return f"{where + ': ' if where else ''}{cause}"


def _accept_what_github_sends(document: Any) -> int:
    """Adjust three patterns of GitHub's description that openapi-core, reading OpenAPI 3.0.3 to the letter,
    would hold against GitHub's own answers and against clients that send what GitHub accepts:
    - `nullable` with an `enum` of strings (`state_reason`): null is added to the enum;
    - `nullable` on a bare `oneOf`/`anyOf`/`allOf` (a commit's `author`): null is offered as an alternative;
    - a `discriminator` mapping "array" (a contents listing is an array, which has no property to look at):
      dropped, the `oneOf` alone still tells a directory from a file.
    Returns how many places were adjusted."""
    adjusted, stack = 0, [document]
    while stack:
        node = stack.pop()
        if isinstance(node, list):
            stack.extend(node)
            continue
        if not isinstance(node, dict):
            continue
        if node.get("nullable") is True and isinstance(node.get("enum"), list) and None not in node["enum"]:
            node["enum"].append(None)
            adjusted += 1
        composites = [key for key in ("oneOf", "anyOf", "allOf") if key in node]
        if node.get("nullable") is True and "type" not in node and composites:
            alternatives = {key: node.pop(key) for key in composites}
            node["anyOf"] = [alternatives, {"enum": [None]}]
            adjusted += 1
        if "array" in node.get("discriminator", {}).get("mapping", {}):
            del node["discriminator"]
            adjusted += 1
        stack.extend(node.values())
    return adjusted


@functools.lru_cache(maxsize=1)
def request_checker() -> RequestChecker:
    """The process-wide checker: the description is parsed once, however many doubles a test run starts.
    It parses its own copy, because it adjusts it (see `_accept_what_github_sends`)."""
    with open(openapi_path(), "rb") as handle:
        document = json.load(handle)
    _accept_what_github_sends(document)
    return RequestChecker(document)
