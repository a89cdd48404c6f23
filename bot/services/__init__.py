"""Use cases that orchestrate the core and the adapters: sync, and later dedup, verify, digest."""
