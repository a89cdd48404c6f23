"""The test-facing half of `AnthropicDouble`: script answers, inject faults and delays, read what was recorded.

Everything here is thread-safe: tests call these methods while the server's threads answer requests.
Answers are taken in order: queued answers first (FIFO), then `responder`; both serve /v1/messages and the
requests of a Message Batch alike. Faults and delays apply to the next requests that pass validation
(optionally only to one path), so an invalid request is still answered 400 and does not use them up.
"""
from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .answers import Answer, coerce_answer, error_answer, text_answer, tool_answer
from .errors import error_type_for
from .prompt_cache import PromptCache

Responder = Callable[[dict], Any]


@dataclass
class RecordedRequest:
    """One request as the double received it."""

    method: str
    path: str
    query: dict[str, str]
    headers: dict[str, str]
    json: Any
    received_at: float = field(default_factory=time.monotonic)  # to measure a client's waits between tries
    status: int | None = None  # what the double answered; 499 when the client hung up during a delay

    def header(self, name: str) -> str | None:
        """A header by case-insensitive name (HTTP clients differ in how they spell them)."""
        lowered = name.lower()
        return next((value for key, value in self.headers.items() if key.lower() == lowered), None)


@dataclass
class Fault:
    """An error the double answers instead of the real thing, to the next `remaining` requests on `path`."""

    status: int
    error_type: str
    message: str
    headers: dict[str, str]
    remaining: int
    path: str | None


@dataclass
class Delay:
    seconds: float
    remaining: int
    path: str | None


class Controls:
    def __init__(self) -> None:
        self._lock = threading.Lock()  # guards the lists and queues below
        self._requests: list[RecordedRequest] = []
        self._answers: deque[Answer] = deque()
        self._faults: deque[Fault] = deque()
        self._delays: deque[Delay] = deque()
        self.responder: Responder | None = None  # answers when the queue is empty
        self.violations: list[str] = []  # requests the real API would refuse, and house-rule breaches
        self.unimplemented: list[str] = []  # valid requests the double cannot answer (e.g. streaming)
        self.errors: list[str] = []  # script mistakes (no answer, impossible answer) and the double's own bugs
        self.prompt_cache = PromptCache()

    # -- what was recorded -------------------------------------------------------------------------------
    @property
    def requests(self) -> list[RecordedRequest]:
        """Every request received so far, oldest first (a copy)."""
        with self._lock:
            return list(self._requests)

    def requests_to(self, path: str, method: str = "POST") -> list[RecordedRequest]:
        return [request for request in self.requests if request.path == path and request.method == method]

    def clear_requests(self) -> None:
        with self._lock:
            self._requests.clear()

    def _record(self, request: RecordedRequest) -> None:
        with self._lock:
            self._requests.append(request)

    def _violation(self, problem: str) -> None:
        with self._lock:
            self.violations.append(problem)

    def _error(self, problem: str) -> None:
        with self._lock:
            self.errors.append(problem)

    def take_violations(self) -> list[str]:
        """The violations so far, emptying the list (for tests that provoke them on purpose)."""
        with self._lock:
            taken, self.violations[:] = list(self.violations), []
        return taken

    def take_errors(self) -> list[str]:
        with self._lock:
            taken, self.errors[:] = list(self.errors), []
        return taken

    def problems(self) -> list[str]:
        """Violations, unimplemented requests, script errors and unused answers: empty after a clean test."""
        with self._lock:
            unused = ([f"unused answer: {len(self._answers)} queued answer(s) were never asked for"]
                      if self._answers else [])
            return ([f"violation: {v}" for v in self.violations] + [f"unimplemented: {u}" for u in self.unimplemented]
                    + [f"double error: {e}" for e in self.errors] + unused)

    # -- scripted answers --------------------------------------------------------------------------------
    def answer_with(self, *answers: Answer) -> None:
        with self._lock:
            self._answers.extend(answers)

    def answer_with_tool(self, name: str, input: Any, *, usage: dict | None = None, text: str | None = None,
                         stop_reason: str | None = None) -> None:
        """Queue a `tool_use` answer calling `name` with `input` (sent as given, valid or not).

        `usage` overrides fields of the usage the double computes (input, output and cache tokens)."""
        self.answer_with(tool_answer(name, input, usage=usage, text=text, stop_reason=stop_reason))

    def answer_with_text(self, text: str, *, usage: dict | None = None, stop_reason: str | None = None) -> None:
        self.answer_with(text_answer(text, usage=usage, stop_reason=stop_reason))

    def answer_with_error(self, status: int = 500, error_type: str | None = None, message: str | None = None) -> None:
        """Queue an error in place of the next message (inside a batch: an `errored` result)."""
        self.answer_with(error_answer(status, error_type, message))

    def pending_answers(self) -> int:
        with self._lock:
            return len(self._answers)

    def clear_answers(self) -> None:
        """Drop queued answers (a test that expects some to stay unused; otherwise teardown reports them)."""
        with self._lock:
            self._answers.clear()

    def _next_answer(self, request: dict) -> Answer | None:
        with self._lock:
            if self._answers:
                return self._answers.popleft()
            responder = self.responder
        return coerce_answer(responder(request), request) if responder is not None else None

    # -- faults and delays -------------------------------------------------------------------------------
    def fail_next(self, status: int = 529, error_type: str | None = None, *, message: str | None = None,
                  count: int = 1, retry_after: float | None = None, headers: dict[str, str] | None = None,
                  path: str | None = None) -> None:
        """Answer the next `count` valid requests (on `path`, if given) with an API error.

        529 overloaded_error, 500 api_error and 429 rate_limit_error are the ones clients retry; the error
        type defaults to the one the API sends with `status`. `retry_after` adds a `retry-after` header."""
        error_type = error_type or error_type_for(status)
        all_headers = dict(headers or {})
        if retry_after is not None:
            all_headers["retry-after"] = f"{retry_after:g}"
        message = message or {"overloaded_error": "Overloaded", "api_error": "Internal server error",
                              "rate_limit_error": "Number of requests has exceeded your rate limit"}.get(
                                  error_type, f"scripted {error_type}")
        with self._lock:
            self._faults.append(Fault(status, error_type, message, all_headers, count, path))

    def rate_limit_next(self, retry_after: float = 1, *, count: int = 1, path: str | None = None) -> None:
        """Answer 429 rate_limit_error with `retry-after` and the anthropic-ratelimit-* headers the API sends."""
        reset = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() + retry_after))
        self.fail_next(429, "rate_limit_error", count=count, retry_after=retry_after, path=path, headers={
            "anthropic-ratelimit-requests-limit": "50", "anthropic-ratelimit-requests-remaining": "0",
            "anthropic-ratelimit-requests-reset": reset})

    def delay_next(self, seconds: float, *, count: int = 1, path: str | None = None) -> None:
        """Hold the answer to the next `count` valid requests for `seconds`, to trip client timeouts.

        A delayed request whose client hung up meanwhile takes no answer (recorded with status 499), so a
        retry after a timeout gets the answer the test queued."""
        with self._lock:
            self._delays.append(Delay(seconds, count, path))

    def _take(self, queue: deque, path: str) -> Any:
        with self._lock:
            for item in queue:
                if item.path is None or item.path == path:
                    item.remaining -= 1
                    if item.remaining <= 0:
                        queue.remove(item)
                    return item
        return None

    # -- the prompt cache ------------------------------------------------------------------------------
    def advance_cache_clock(self, seconds: float) -> None:
        """Move the prompt cache's clock forward (e.g. 301 s expires 5-minute entries) without waiting."""
        self.prompt_cache.advance(seconds)

    def clear_prompt_cache(self) -> None:
        self.prompt_cache.clear()
