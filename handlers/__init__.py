"""Webhook event handlers, one module each, composed in the explicit HANDLERS list below.

A handler reads its event's payload, decides, and calls the services; it never talks to PyGithub,
GitPython or SQLAlchemy itself. `dispatch` runs every handler that wants an event, each isolated:
one handler's failure never stops another's.
"""
from __future__ import annotations

import logging

from handlers import (
    bench,
    bisect,
    comments,
    dashboard,
    digest,
    guards,
    installation,
    issues,
    pull_request,
    push,
    reconcile,
    review,
    workflow_run,
)

# guards after push: a check is queued for the head the push synced. dashboard last: on the same delivery it
# re-draws after the handlers that changed something
HANDLERS = (push, guards, pull_request, installation, issues, comments, reconcile, review, digest, bench, bisect,
            workflow_run, dashboard)
log = logging.getLogger("perfbot.handlers")


def github_events(handlers=HANDLERS) -> frozenset[str]:
    """The GitHub events some handler takes; perfbot's own events (with a dot) never come over the webhook."""
    return frozenset(e for h in handlers for e in h.EVENTS if "." not in e)


def dispatch(event, services, handlers=HANDLERS) -> list[tuple[str, BaseException]]:
    failures: list[tuple[str, BaseException]] = []
    for handler in handlers:
        if event.name not in handler.EVENTS:
            continue
        name = handler.__name__.rsplit(".", 1)[-1]
        try:
            handler.handle(event, services)
        except Exception as exc:  # isolate handlers; the worker decides between retry and failure
            log.warning("delivery %s: handler %s failed: %s", event.delivery_id, name, exc,
                        exc_info=not _is_expected(exc), extra={"delivery": event.delivery_id})
            failures.append((name, exc))
    return failures


def _is_expected(exc: BaseException) -> bool:
    from bot.errors import TransientError, UserError

    return isinstance(exc, (TransientError, UserError))
