"""Which reviewer judges a pair: the agent when an API key is configured, else the offline one (the default).

Kept apart from reviewer_agent.py so that choosing the offline reviewer never loads the anthropic SDK (1.7 s).
"""
from __future__ import annotations

from bot.core.dedup.offline_reviewer import OfflineReviewer


def reviewer_for(settings):
    if not settings.anthropic_api_key:
        return OfflineReviewer()
    from bot.adapters.reviewer_agent import AgentReviewer

    return AgentReviewer(settings.anthropic_api_key, settings.review_model, base_url=settings.anthropic_base_url,
                         max_tokens=settings.review_max_tokens)
