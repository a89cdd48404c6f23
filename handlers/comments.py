"""issue_comment, pull_request_review_comment: `/perf <verb>` commands in a comment, answered in one comment;
on an edit, only the commands the previous body did not hold, judged by the permission of whoever edited
(the `sender`), since they wrote those lines."""
from __future__ import annotations

from bot.core.commands import find_commands, new_commands
from bot.core.events import Where
from bot.errors import UserError
from handlers.payload import installation_id, login, repo_full_name

EVENTS = frozenset({"issue_comment", "pull_request_review_comment"})
WATCHED = frozenset({"created", "edited"})


def handle(event, services) -> None:
    if event.action not in WATCHED:
        return
    payload = event.payload
    comment = payload.get("comment") or {}
    author = login(comment, "user")
    writer = login(payload) if event.action == "edited" else author  # an edit's new lines are the editor's
    body = comment.get("body")
    body = body if isinstance(body, str) else ""
    if not author or not writer or services.context.is_bot(writer) or body.lstrip().startswith("<!-- perfbot:"):
        return  # perfbot's own answers echo back as events
    name = services.context.bot_login.removesuffix("[bot]")
    if event.action == "edited":
        previous = ((payload.get("changes") or {}).get("body") or {}).get("from")
        invocations = new_commands(previous if isinstance(previous, str) else "", body, name)
    else:
        invocations = find_commands(body, name)
    if not invocations:
        return
    review = event.name == "pull_request_review_comment"
    thread = payload.get("pull_request") if review else payload.get("issue")
    number, comment_id = (thread or {}).get("number"), comment.get("id")
    if not isinstance(number, int) or not isinstance(comment_id, int):
        raise UserError(f"{event.name} payload without an issue number or comment id")
    is_pull = review or bool((thread or {}).get("pull_request"))
    where = Where(repo_full_name(payload), number, is_pull, comment_id, writer, installation_id(payload),
                  event.delivery_id, review_comment=review, comment_author=author)
    services.commands.comment(where, invocations, name)
