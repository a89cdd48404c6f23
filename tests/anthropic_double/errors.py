"""The Anthropic API's error answers: status codes, error types and the JSON shape clients parse.

Every error is `{"type": "error", "error": {"type": ..., "message": ...}, "request_id": "req_..."}`; the
SDK picks its exception class from the status (and the error type), so both must match the real API.
"""
from __future__ import annotations

import secrets
from dataclasses import dataclass, field

# The error type the real API sends with each status (platform docs, "Errors").
ERROR_TYPE_OF_STATUS = {
    400: "invalid_request_error",
    401: "authentication_error",
    402: "billing_error",
    403: "permission_error",
    404: "not_found_error",
    409: "conflict_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    504: "timeout_error",
    529: "overloaded_error",
}


def new_id(prefix: str) -> str:
    """An opaque id in the API's style (`msg_01...`, `toolu_01...`, `req_01...`, `msgbatch_01...`)."""
    return f"{prefix}_01{secrets.token_hex(11)}"


def error_type_for(status: int) -> str:
    if status in ERROR_TYPE_OF_STATUS:
        return ERROR_TYPE_OF_STATUS[status]
    return "api_error" if status >= 500 else "invalid_request_error"


def error_body(error_type: str, message: str, request_id: str | None = None) -> dict:
    body = {"type": "error", "error": {"type": error_type, "message": message}}
    if request_id is not None:
        body["request_id"] = request_id
    return body


@dataclass
class ApiError(Exception):
    """An error answer; raised by checks and handlers, turned into a response by the server."""

    status: int
    message: str
    error_type: str | None = None  # None: the type the real API sends with `status`
    headers: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        super().__init__(f"{self.status} {self.message}")
        if self.error_type is None:
            self.error_type = error_type_for(self.status)

    def body(self, request_id: str | None = None) -> dict:
        return error_body(self.error_type, self.message, request_id)


def invalid(message: str) -> ApiError:
    """The 400 invalid_request_error that almost every validation failure is."""
    return ApiError(400, message)
