"""The operator's LLM budget (instance file `[llm]`): reviews per push and per hour. A report author can push
10,000 reports; each one costs perfbot's operator a request, so past the budget the rest wait in the queue
(`perfbot.review`), while the mirror (issues, lint) goes on without them."""
from __future__ import annotations

from datetime import UTC, datetime, timedelta

from bot.adapters.store.engine import Database
from bot.adapters.store.reviews.llm_cache import asked_since
from bot.core.config.instance import LlmBudget
from bot.errors import RateLimited

HOUR = timedelta(hours=1)


class BudgetSpent(RateLimited):
    """No more LLM requests now: the work waits in the queue, and the wait is no failed attempt."""


class ReviewBudget:
    """Counts the LLM requests of one push (or one queued review) against the operator's budget."""

    def __init__(self, db: Database, budget: LlmBudget, *, now=lambda: datetime.now(UTC)) -> None:
        self.db, self.budget, self.now, self.used = db, budget, now, 0

    def take(self) -> None:
        """One request more, or BudgetSpent naming which budget ran out and when to try again."""
        self.check()
        self.used += 1

    def check(self) -> None:
        if self.used >= self.budget.reviews_per_push:
            raise BudgetSpent(f"the {self.budget.reviews_per_push} LLM reviews one push may ask for are spent",
                              retry_after=60.0)
        if asked_since(self.db, self.now() - HOUR) >= self.budget.reviews_per_hour:
            raise BudgetSpent(f"the {self.budget.reviews_per_hour} LLM reviews of this hour are spent",
                              retry_after=600.0)


class Budgeted:
    """An agent reviewer whose every request (a pair, an audit, a report's facts) first takes from `budget`;
    answers already cached cost nothing and never reach it. What the reviewer cannot do, neither can this."""

    _ASKS = frozenset({"review", "audit", "read_facts"})

    def __init__(self, reviewer, budget: ReviewBudget) -> None:
        self._reviewer, self.budget = reviewer, budget
        self.name = reviewer.name

    def __getattr__(self, name: str):
        found = getattr(self._reviewer, name)
        if name not in self._ASKS:
            return found

        def asked(*args, **kwargs):
            self.budget.take()
            return found(*args, **kwargs)
        return asked


def budgeted(reviewer, db: Database, budget: LlmBudget):
    """The offline reviewer costs nothing and stays as it is; an agent reviewer is counted."""
    if getattr(reviewer, "name", "offline") == "offline":
        return reviewer
    return Budgeted(reviewer, ReviewBudget(db, budget))
