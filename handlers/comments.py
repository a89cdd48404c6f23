"""issue_comment, pull_request_review_comment: `/perf <verb>` commands in a comment, answered in one comment;
on an edit, only the commands the previous body did not hold, judged by the permission of whoever edited
(the `sender`), since they wrote those lines."""
from __future__ import annotations

from typing import TYPE_CHECKING

from bot.core.commands import find_commands, new_commands
from bot.core.events import Where
from bot.errors import Invalid
from handlers.payload import CommentEvent, Delivery

if TYPE_CHECKING:
    from bot.services.usecases import BotServices

WATCHED = frozenset({"created", "edited"})
WANTS = {"issue_comment": WATCHED, "pull_request_review_comment": WATCHED}


def handle(delivery: Delivery[CommentEvent], services: BotServices) -> None:
    event, comment = delivery.payload, delivery.payload.comment
    author = comment.user.login if comment.user else ""
    writer = event.sender_login if delivery.action == "edited" else author  # an edit's new lines are the editor's
    body = comment.body or ""
    if not author or not writer or services.context.is_bot(writer) or body.lstrip().startswith("<!-- perfbot:"):
        return  # perfbot's own answers echo back as events
    name = services.context.bot_login.removesuffix("[bot]")
    if delivery.action == "edited":
        previous = event.changes.old_body if event.changes else None
        invocations = new_commands(previous or "", body, name)
    else:
        invocations = find_commands(body, name)
    if not invocations:
        return
    review = delivery.name == "pull_request_review_comment"
    thread = event.pull_request if review else event.issue
    if thread is None:
        raise Invalid("has no issue or pull request", at=f"{delivery.name} payload")
    where = Where(event.full_name, thread.number, review or thread.pull_request is not None, comment.id, writer,
                  event.installation_id, delivery.delivery_id, review_comment=review, comment_author=author)
    services.commands.comment(where, invocations, name)
