"""Dedup: retrieval, the reviewers, the labelled sets, the flows."""
