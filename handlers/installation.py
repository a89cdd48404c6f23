"""installation: remember which installation covers which repositories, and forget removed ones."""
from __future__ import annotations

from bot.errors import UserError

EVENTS = frozenset({"installation", "installation_repositories"})


def handle(event, services) -> None:
    payload = event.payload
    installation = payload.get("installation") or {}
    if not isinstance(installation.get("id"), int):
        raise UserError("installation payload without installation.id")
    account = (installation.get("account") or {}).get("login") or ""
    if event.name == "installation":
        repos = [r.get("full_name") for r in payload.get("repositories") or [] if isinstance(r, dict)]
        active = event.action not in ("deleted", "suspend")
        services.reports.record_installation(installation["id"], account, repos, active=active)
    else:
        added = [r.get("full_name") for r in payload.get("repositories_added") or [] if isinstance(r, dict)]
        removed = [r.get("full_name") for r in payload.get("repositories_removed") or [] if isinstance(r, dict)]
        services.reports.update_installation_repos(installation["id"], account, added, removed)
