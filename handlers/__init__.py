"""Webhook event handlers, one module each, composed in the explicit HANDLERS list below.

Each handler declares what it wants (`WANTS`: event name -> the actions it acts on, or ANY) next to its
`handle(delivery, services)`. `dispatch` parses a delivery's payload once into its event's model
(`handlers/payload.py`), then runs every handler that wants the event and action, each isolated: one handler's
failure never stops another's. A handler never talks to PyGithub, GitPython or SQLAlchemy itself.
"""
from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from types import ModuleType
from typing import TYPE_CHECKING, Any, Protocol

from bot.core import refusals
from bot.errors import TransientError, UserError
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
from handlers.payload import Delivery, parse

if TYPE_CHECKING:
    from bot.services.usecases import BotServices

# guards after push: a check is queued for the head the push synced. dashboard last: on the same delivery it
# re-draws after the handlers that changed something
HANDLERS: tuple[ModuleType, ...] = (push, guards, pull_request, installation, issues, comments, reconcile, review,
                                    digest, bench, bisect, workflow_run, dashboard)
log = logging.getLogger("perfbot.handlers")


class Stored(Protocol):
    """A delivery as the worker hands it over: its payload still the stored JSON."""

    @property
    def name(self) -> str: ...
    @property
    def action(self) -> str | None: ...
    @property
    def delivery_id(self) -> str: ...
    @property
    def payload(self) -> dict[str, Any]: ...
    @property
    def repo(self) -> str | None: ...
    @property
    def installation_id(self) -> int | None: ...
    @property
    def keep_alive(self) -> Callable[[float], object]: ...


def _wants(handler: ModuleType, name: str, action: str | None) -> bool:
    wants: Mapping[str, frozenset[str] | None] = handler.WANTS
    if name not in wants:
        return False
    actions = wants[name]
    return actions is None or action in actions


def github_events(handlers: Sequence[ModuleType] = HANDLERS) -> frozenset[str]:
    """The GitHub events some handler takes; perfbot's own events (with a dot) never come over the webhook."""
    return frozenset(e for h in handlers for e in h.WANTS if "." not in e)


def dispatch(event: Stored, services: BotServices,
             handlers: Sequence[ModuleType] = HANDLERS) -> list[tuple[str, BaseException]]:
    wanting = [h for h in handlers if _wants(h, event.name, event.action)]
    if not wanting:
        return []
    try:
        payload = parse(event.name, event.payload)
    except UserError as exc:  # one refusal for the delivery, not one per handler that would have read it
        log.warning("delivery %s: %s", event.delivery_id, refusals.log_line(exc), extra={"delivery": event.delivery_id})
        return [("payload", exc)]
    delivery = Delivery(event.name, event.action, event.delivery_id, payload, event.repo, event.installation_id,
                        event.keep_alive)
    failures: list[tuple[str, BaseException]] = []
    for handler in wanting:
        name = handler.__name__.rsplit(".", 1)[-1]
        try:
            handler.handle(delivery, services)
        except Exception as exc:  # isolate handlers; the worker decides between retry and failure
            said = refusals.log_line(exc) if isinstance(exc, UserError) else exc
            log.warning("delivery %s: handler %s failed: %s", event.delivery_id, name, said,
                        exc_info=not isinstance(exc, (TransientError, UserError)),
                        extra={"delivery": event.delivery_id})
            failures.append((name, exc))
    return failures
