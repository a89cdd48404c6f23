"""The two kinds of failure every layer speaks: a user's mistake, and a passing outage worth a retry; and one
permanent failure the composition root may mend once (credentials GitHub refused).

A user's mistake is a refusal of one kind (bot/core/refusals.py: the kinds, their fields, their one renderer)."""
from bot.core.refusals import Busy, Invalid, NotAllowed, NotConfigured, NotFound, Unreachable, UserError

__all__ = ["Busy", "CredentialsRejected", "Invalid", "NotAllowed", "NotConfigured", "NotFound", "RateLimited",
           "TransientError", "Unreachable", "UserError"]


class TransientError(Exception):
    """A passing failure (network, GitHub 5xx or rate limit, database busy): the work is retried later."""

    def __init__(self, message: str, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class RateLimited(TransientError):
    """GitHub's rate limit: the work waits in the queue until `retry_after`, and the wait is no failed attempt."""


class CredentialsRejected(Exception):
    """GitHub refused perfbot's credentials (HTTP 401, or git's authentication failed): a wrong or revoked token,
    or an installation token ended before its stated expiry. Permanent, unless a new token is worth a try."""
