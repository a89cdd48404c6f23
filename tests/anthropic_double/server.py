"""`AnthropicDouble`: a local Anthropic Messages API on 127.0.0.1 for tests, strict about what it accepts.

Every request goes through the same steps, in the API's order:
record it -> route it (unknown endpoint: 404 not_found_error) -> size (413 request_too_large) ->
authenticate (`x-api-key`, or `Authorization: Bearer` as SDK 2.x sends it; if both come, `x-api-key` wins;
401 authentication_error) -> `anthropic-version` (400) -> JSON body (400) -> validate the body (400, or 404
for an unknown model) -> injected fault (`fail_next`, `rate_limit_next`) -> injected delay (`delay_next`)
-> the endpoint. Every refusal is also appended to `violations`, so a test of a correct client asserts
that list stays empty (the `anthropic_api` fixture does it at teardown).

Answers carry the API's headers (`request-id`, `anthropic-organization-id`) and its error shape. A bug in
the test script (no answer queued, a responder that raises) or in the double is answered 500 with
`x-should-retry: false`, so the SDK fails at once instead of retrying, and is kept in `errors`.
"""
from __future__ import annotations

import json
import re
import select
import socket
import threading
import traceback
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from werkzeug.wrappers import Request, Response

from tests.servers import LoopbackServer

from .batches import BatchStore, check_batch_shape
from .controls import RecordedRequest
from .errors import ApiError, error_body, invalid, new_id
from .generation import Generation
from .prompt_cache import count_input_tokens

# Models the double accepts unless told otherwise, with their largest max_tokens.
DEFAULT_MODELS = {"claude-opus-5-5": 128_000, "claude-sonnet-5-5": 64_000, "claude-haiku-5-5": 64_000,
                  "claude-opus-4-6": 128_000, "claude-sonnet-4-6": 64_000, "claude-haiku-4-5": 64_000}
DEFAULT_MAX_OUTPUT_TOKENS = 64_000
API_VERSIONS = ("2023-01-01", "2023-06-01", "2026-10-21")
MAX_BODY_BYTES = 32 * 1024 * 1024  # Messages and token counting; the Batches API takes 256 MB
MAX_BATCH_BODY_BYTES = 256 * 1024 * 1024
BATCH = r"/v1/messages/batches/(?P<batch_id>[A-Za-z0-9_-]+)"
ROUTES = [(method, re.compile(f"^{pattern}$"), name) for method, pattern, name in (
    ("POST", "/v1/messages", "messages"),
    ("POST", "/v1/messages/count_tokens", "count_tokens"),
    ("POST", "/v1/messages/batches", "batch_create"),
    ("GET", "/v1/messages/batches", "batch_list"),
    ("GET", BATCH, "batch_retrieve"),
    ("DELETE", BATCH, "batch_delete"),
    ("GET", BATCH + "/results", "batch_results"),
    ("POST", BATCH + "/cancel", "batch_cancel"),
)]


@dataclass
class Reply:
    status: int
    body: Any  # a dict (sent as JSON) or bytes
    headers: dict[str, str] = field(default_factory=dict)
    content_type: str = "application/json"



def _client_gone(environ: dict) -> bool:
    """Whether the client closed its connection (a timed-out SDK call hangs up before the answer)."""
    connection = environ.get("werkzeug.socket")
    if connection is None:
        return False
    try:
        readable, _, _ = select.select([connection], [], [], 0)
        return bool(readable) and connection.recv(1, socket.MSG_PEEK) == b""
    except OSError:
        return True


class AnthropicDouble(LoopbackServer, Generation):
    """The Messages API, token counting and Message Batches on a free loopback port.

    Use `with AnthropicDouble() as double:` or the `anthropic_api` fixture, and point the SDK at it:
    `anthropic.Anthropic(base_url=double.url, api_key=double.api_key)`.
    """

    name = "Anthropic double"

    def __init__(self, *, api_key: str = "sk-ant-api03-double-test-key",
                 models: Mapping[str, int] | Iterable[str] | None = None,
                 api_versions: Iterable[str] = API_VERSIONS, min_cacheable_tokens: int = 1024,
                 strict_alternation: bool = True, batch_polls_before_end: int = 0,
                 extra_fields: Iterable[str] = ()) -> None:
        super().__init__()
        self.api_key = api_key
        self.api_keys = {api_key}
        if models is None:
            models = DEFAULT_MODELS
        self.models = dict(models) if isinstance(models, Mapping) else dict.fromkeys(models, DEFAULT_MAX_OUTPUT_TOKENS)
        self.api_versions = set(api_versions)
        self.min_cacheable_tokens = min_cacheable_tokens  # real minimums are 512 to 4096 tokens by model
        self.strict_alternation = strict_alternation
        self.extra_fields = frozenset(extra_fields)  # top-level fields to accept beyond the documented ones
        self.batches = BatchStore(self._process_batch_request)
        self.batches.polls_before_end = batch_polls_before_end
        self._stopping = threading.Event()

    # -- lifecycle ---------------------------------------------------------------------------------------
    def start(self) -> AnthropicDouble:
        self._stopping.clear()
        self._serve(self._wsgi)
        return self

    def stop(self) -> None:
        self._stopping.set()  # wakes requests held by delay_next
        super().stop()

    def add_api_key(self, key: str) -> None:
        self.api_keys.add(key)

    @property
    def batch_polls_before_end(self) -> int:
        return self.batches.polls_before_end

    @batch_polls_before_end.setter
    def batch_polls_before_end(self, polls: int) -> None:
        self.batches.polls_before_end = polls

    # -- the request pipeline ------------------------------------------------------------------------------
    def _wsgi(self, environ: dict, start_response: Any) -> Iterable[bytes]:
        request = Request(environ)
        raw = request.get_data(cache=False)
        record = RecordedRequest(request.method, request.path, dict(request.args), dict(request.headers), None)
        self._record(record)
        request_id = new_id("req")
        try:
            reply = self._handle(request, record, raw, environ)
        except ApiError as error:
            reply = Reply(error.status, error.body(request_id), dict(error.headers))
        except Exception:  # a bug in the double: answer 500 and keep the traceback for the test to show
            self._error(f"{request.method} {request.path}:\n{traceback.format_exc()}")
            reply = Reply(500, error_body("api_error", "a bug in the Anthropic double; see double.errors", request_id),
                          {"x-should-retry": "false"})
        if reply is None:  # the client hung up while the answer was delayed
            record.status = 499
            return Response(status=499)(environ, start_response)
        record.status = reply.status
        headers = {"request-id": request_id, "anthropic-organization-id": "00000000-0000-4000-8000-00000000d0b1",
                   **reply.headers}
        data = reply.body if isinstance(reply.body, bytes) else json.dumps(reply.body).encode()
        return Response(data, status=reply.status, headers=headers, content_type=reply.content_type)(
            environ, start_response)

    def _handle(self, request: Request, record: RecordedRequest, raw: bytes, environ: dict) -> Reply | None:
        where = f"{request.method} {request.path}"
        route = next(((name, match) for method, pattern, name in ROUTES
                      if method == request.method and (match := pattern.match(request.path))), None)
        if route is None:
            raise self._refuse(ApiError(404, "Not Found"), where + " (no such endpoint)")
        name, match = route
        limit = MAX_BATCH_BODY_BYTES if name == "batch_create" else MAX_BODY_BYTES
        if len(raw) > limit:
            raise self._refuse(ApiError(413, f"Request exceeds the maximum size of {limit} bytes"), where)
        key = request.headers.get("x-api-key")
        if key is None and request.headers.get("Authorization", "").startswith("Bearer "):
            key = request.headers["Authorization"][len("Bearer "):]
        if not key:
            raise self._refuse(ApiError(401, "x-api-key header is required"), where)
        if key not in self.api_keys:
            raise self._refuse(ApiError(401, "invalid x-api-key"), where)
        version = request.headers.get("anthropic-version")
        if not version:
            raise self._refuse(invalid("anthropic-version: header is required"), where)
        if version not in self.api_versions:
            raise self._refuse(invalid(f"anthropic-version: {version!r} is not a valid version "
                                       f"(known: {', '.join(sorted(self.api_versions))})"), where)
        if raw:
            if (request.mimetype or "") != "application/json":
                raise self._refuse(invalid(f"Content-Type must be application/json, not {request.mimetype!r}"), where)
            try:
                record.json = json.loads(raw)
            except ValueError:
                raise self._refuse(invalid("There was an error parsing the body: it is not valid JSON"),
                                   where) from None
        elif request.method == "POST" and name != "batch_cancel":
            raise self._refuse(invalid("Request body must be a JSON object"), where)

        if name in ("messages", "count_tokens"):
            self._check(record.json, name, version, where)
        elif name == "batch_create":
            problems = check_batch_shape(record.json)
            for problem in problems:
                self._refuse(problem, where)
            if problems:
                raise problems[0]

        fault = self._take(self._faults, request.path)
        if fault is not None:
            raise ApiError(fault.status, fault.message, fault.error_type, dict(fault.headers))
        delay = self._take(self._delays, request.path)
        if delay is not None:
            self._stopping.wait(delay.seconds)
            if _client_gone(environ):
                return None  # take no answer: the client's retry should get the one the test queued
        try:
            return self._endpoint(name, match.groupdict(), record, version, f"http://{request.host}")
        except ApiError as error:
            # an unknown batch, results asked for too early: the client's mistake (a scripted error is not)
            if error.status < 500 and name.startswith("batch_"):
                self._refuse(error, where)
            raise

    def _endpoint(self, name: str, path: dict[str, str], record: RecordedRequest, version: str,
                  base_url: str) -> Reply:
        batch_id = path.get("batch_id", "")
        if name == "messages":
            return Reply(200, self._generate(record.json, self._pick_answer(record.json), "standard"))
        if name == "count_tokens":
            return Reply(200, {"input_tokens": count_input_tokens(record.json)})
        if name == "batch_create":
            return Reply(200, self.batches.create(record.json, version, base_url))
        if name == "batch_list":
            return Reply(200, self.batches.list(record.query, base_url))
        if name == "batch_retrieve":
            return Reply(200, self.batches.retrieve(batch_id, base_url))
        if name == "batch_cancel":
            return Reply(200, self.batches.cancel(batch_id, base_url))
        if name == "batch_delete":
            return Reply(200, self.batches.delete(batch_id))
        return Reply(200, self.batches.results(batch_id), content_type="application/binary")
