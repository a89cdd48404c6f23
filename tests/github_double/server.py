"""`GitHubDouble`: a local GitHub REST API on 127.0.0.1 for tests, checked against GitHub's OpenAPI description.

Every request goes through the same steps, in GitHub's order where it has one:
record it -> parse the JSON body (400 "Problems parsing JSON") -> match and validate it against the
OpenAPI description (unknown operation: 400, invalid parameters or body: 422; both also land in
`violations`) -> injected faults (`fail_next`, `rate_limit_next`) -> authenticate (401) -> the handler for
the matched operation (404 and an `unimplemented` entry when the double has none) -> rate-limit headers.
Paths work with and without GitHub Enterprise's /api/v3 prefix; links in responses keep the prefix used.
"""
from __future__ import annotations

import json
import traceback
import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from http import HTTPStatus
from typing import Any

from werkzeug.wrappers import Request, Response

from tests.servers import LoopbackServer

from . import (  # noqa: F401  (register handlers)
    routes_actions,
    routes_apps,
    routes_checks,
    routes_comments,
    routes_hooks,
    routes_issues,
    routes_pulls,
    routes_repos,
    routes_review_comments,
    routes_search,
)
from .controls import Controls, Fault
from .openapi_check import request_checker
from .routes_apps import authenticate
from .routes_common import HANDLERS, ApiError, Call, Reply

GHES_PREFIX = "/api/v3"
WRITE_METHODS = frozenset({"POST", "PATCH", "PUT", "DELETE"})


@dataclass
class RecordedRequest:
    """One request as the double received it (path without the /api/v3 prefix)."""

    method: str
    path: str
    query: dict[str, str]
    json: Any
    headers: dict[str, str]
    operation: str | None = None  # the matched OpenAPI template, e.g. "/repos/{owner}/{repo}/issues"
    status: int | None = None  # what the double answered

    @property
    def is_write(self) -> bool:
        return self.method in WRITE_METHODS



class GitHubDouble(LoopbackServer, Controls):
    """A stateful GitHub REST API on a free loopback port. Use `with GitHubDouble() as github:` or the
    `github` fixture; point PyGithub at `github.url` (or `github.ghes_url`) with `github.token`."""

    name = "GitHub double"

    def __init__(self, *, token: str = "test-token", login: str = "perfbot-tester", allow_anonymous: bool = False,
                 validate_responses: bool = False) -> None:
        super().__init__()
        self.token, self.login = token, login
        self.allow_anonymous = allow_anonymous
        self.validate_responses = validate_responses  # costs 1-10 ms a response; meant for the double's own tests
        self.add_token(token, login)

    # -- lifecycle ---------------------------------------------------------------------------------------
    def start(self) -> GitHubDouble:
        self._checker = request_checker()  # parses the 13 MB description once per process
        for method, template in HANDLERS:
            if (method, template) not in self._checker.routes:
                raise RuntimeError(f"handler for {method} {template}, which GitHub's description does not document")
        self._serve(self._wsgi)
        return self

    @property
    def ghes_url(self) -> str:
        """The same API under GitHub Enterprise Server's prefix: http://127.0.0.1:PORT/api/v3."""
        return self.url + GHES_PREFIX

    # -- the request pipeline ------------------------------------------------------------------------------
    def _wsgi(self, environ: dict, start_response: Any) -> Iterable[bytes]:
        request = Request(environ)
        raw_path = (environ.get("RAW_URI") or environ.get("REQUEST_URI") or request.path).split("?", 1)[0]
        prefix = GHES_PREFIX if raw_path == GHES_PREFIX or raw_path.startswith(GHES_PREFIX + "/") else ""
        raw_path = raw_path[len(prefix):] or "/"
        if not prefix and raw_path.startswith(routes_actions.DOWNLOAD_PREFIX):
            return self._download(request, raw_path)(environ, start_response)
        body = request.get_data(cache=False)
        record = RecordedRequest(request.method, raw_path, dict(request.args), None, dict(request.headers))
        with self._lock:
            self._requests.append(record)
        try:
            record.json = json.loads(body) if body else None
        except ValueError:
            self._violation(f"{request.method} {raw_path}: body is not JSON")
            reply = ApiError(400, "Problems parsing JSON").reply()
        else:
            reply = self._answer(request, record, raw_path, body, prefix)
        record.status = reply.status
        return self._respond(reply)(environ, start_response)

    def _answer(self, request: Request, record: RecordedRequest, raw_path: str, body: bytes, prefix: str) -> Reply:
        operation, problems = self._checker.check(request.method, raw_path, request.args, request.headers, body,
                                                  request.content_type)
        record.operation = operation.template if operation else None
        for problem in problems:
            self._violation(problem)
        if operation is None:
            return ApiError(400, "The GitHub double: " + problems[0]).reply()
        if problems:
            return ApiError(422, "Invalid request.\n\n" + "\n".join(problems)).reply()
        fault = self._take_fault()
        if fault is not None:
            return self._fault_reply(fault)
        hold = self._take_hold(operation.method, operation.template)
        if hold is not None:
            hold.reached.set()
            hold.released.wait(60)
        try:
            identity = authenticate(self.state, operation.template, request.headers.get("Authorization"))
            if identity is None and not self.allow_anonymous:
                raise ApiError(401, "Requires authentication")
        except ApiError as error:
            return error.reply()
        handler = HANDLERS.get(operation.key)
        if handler is None:
            with self._lock:
                self.unimplemented.append(f"{operation.method} {operation.template}")
            return ApiError(404, f"Not Found (the GitHub double does not implement {operation.method} "
                                 f"{operation.template})").reply()
        host = request.host  # links in responses point back at the double, with the prefix the client used
        call = Call(self.state, operation.method, operation.template, dict(operation.variables), request.args,
                    record.json, identity, f"http://{host}{prefix}", f"http://{host}", raw_path)
        reply = self._run(handler, call, raw_path)
        if hold is not None:
            hold.answered.set()
        if self.validate_responses and 200 <= reply.status < 300:
            data = json.dumps(reply.body).encode() if reply.body is not None else None
            for problem in self._checker.check_response(operation, reply.status, data):
                self._violation(problem)
        return reply

    def _run(self, handler: Any, call: Call, raw_path: str) -> Reply:
        with self.state.lock:  # one request at a time changes the state, as in a transaction
            try:
                reply = handler(call)
            except ApiError as error:
                reply = error.reply()
            except Exception:  # a bug in the double: answer 500 and keep the traceback for the test to show
                with self._lock:
                    self.errors.append(f"{call.method} {raw_path}:\n{traceback.format_exc()}")
                reply = ApiError(500, "Server Error (a bug in the GitHub double; see double.errors)").reply()
            if call.template != "/rate_limit":  # GitHub does not count rate-limit queries
                reply.headers.update(self._rate_headers(call.identity, call.template))
        return reply

    def _rate_headers(self, identity: Any, template: str) -> dict[str, str]:
        resource = "search" if template.startswith("/search/") else "core"
        who = identity.user.login if identity else "anonymous"
        limit, remaining, reset, used = self.state.count_request(who, resource)
        return {"X-RateLimit-Limit": str(limit), "X-RateLimit-Remaining": str(remaining),
                "X-RateLimit-Reset": str(reset), "X-RateLimit-Used": str(used), "X-RateLimit-Resource": resource}

    def _fault_reply(self, fault: Fault) -> Reply:
        body = {"message": fault.message or HTTPStatus(fault.status).phrase,
                "documentation_url": fault.documentation_url,
                "status": str(fault.status)}
        return Reply(fault.status, body, dict(fault.headers))

    def _download(self, request: Request, raw_path: str) -> Response:
        """An artifact's signed storage address: not the API, so unvalidated; like storage, it refuses a second
        credential (perfbot's token must never travel there) and serves each address once."""
        with self._lock:
            self._requests.append(RecordedRequest(request.method, raw_path, {}, None, dict(request.headers),
                                                  status=200))
        if "Authorization" in request.headers:
            return Response("<Error><Code>InvalidAuthenticationInfo</Code></Error>", status=400,
                            content_type="application/xml")
        with self.state.lock:
            data = self.state.downloads.pop(raw_path[len(routes_actions.DOWNLOAD_PREFIX):], None)
        if data is None:
            return Response("<Error><Code>AuthenticationFailed</Code></Error>", status=403,
                            content_type="application/xml")
        return Response(data, status=200, content_type="application/zip")

    @staticmethod
    def _respond(reply: Reply) -> Response:
        headers = {"X-GitHub-Request-Id": uuid.uuid4().hex[:20].upper(),
                   "X-GitHub-Media-Type": "github.v3; format=json",
                   "X-GitHub-Api-Version-Selected": "2022-11-28", **reply.headers}
        if reply.body is None:
            return Response(status=reply.status, headers=headers)
        return Response(json.dumps(reply.body), status=reply.status, headers=headers,
                        content_type="application/json; charset=utf-8")
