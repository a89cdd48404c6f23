"""Fixes, bench runs, guards and merge PRs in the store (bisections: bot/bisect/store.py)."""
