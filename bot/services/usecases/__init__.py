"""The use cases handlers call, each a class whose dependencies are its constructor's arguments: Reports,
Fixes, Guards, Digests, Commands and Lead over one frozen Context, wired together in BotServices."""
from bot.services.usecases.context import Context, TrackerFactory
from bot.services.usecases.source import NotWatched, RepoSource
from bot.services.usecases.wiring import BotServices

__all__ = ["BotServices", "Context", "NotWatched", "RepoSource", "TrackerFactory"]
