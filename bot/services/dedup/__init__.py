"""Dedup of drafts and pushed reports: the review, its flow, the long-lived index."""
