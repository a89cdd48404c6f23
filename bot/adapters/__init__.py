"""Adapters: the only code that talks to databases, git, GitHub, LLMs and processes."""
