"""Runners: where benchmarks run (local worktrees today), behind one small interface."""
