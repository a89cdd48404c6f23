"""Fixes, bench runs, guards, bisections and merge PRs in the store."""
