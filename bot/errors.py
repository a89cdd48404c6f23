"""The two kinds of failure every layer speaks: a user's mistake, and a passing outage worth a retry."""


class UserError(Exception):
    """Bad input from a person or an agent: the message is shown to them and says how to retry."""


class TransientError(Exception):
    """A passing failure (network, GitHub 5xx or rate limit, database busy): the work is retried later."""

    def __init__(self, message: str, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after
