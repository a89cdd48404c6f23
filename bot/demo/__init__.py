"""A self-contained demo project for perfbot: a tiny C runtime, reports about it, and a fix that works."""
from bot.demo.create import DemoInfo, create_demo

__all__ = ["DemoInfo", "create_demo"]
