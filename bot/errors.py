"""The two kinds of failure every layer speaks: a user's mistake, and a passing outage worth a retry; and one
permanent failure the composition root may mend once (credentials GitHub refused)."""


class UserError(Exception):
    """Bad input from a person or an agent: the message is shown to them and says how to retry."""


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
