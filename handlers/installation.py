"""installation: remember which installation covers which repositories, and forget removed ones."""
from __future__ import annotations

from typing import TYPE_CHECKING

from handlers.payload import Delivery, InstallationEvent

if TYPE_CHECKING:
    from bot.services.usecases import BotServices

WANTS = {"installation": None, "installation_repositories": None}


def handle(delivery: Delivery[InstallationEvent], services: BotServices) -> None:
    event = delivery.payload
    account, installation_id = event.account_login, event.installation.id
    if delivery.name == "installation":
        services.reports.record_installation(installation_id, account, [r.full_name for r in event.repositories],
                                             active=delivery.action not in ("deleted", "suspend"))
    else:
        services.reports.update_installation_repos(installation_id, account,
                                                   [r.full_name for r in event.repositories_added],
                                                   [r.full_name for r in event.repositories_removed])
