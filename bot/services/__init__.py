"""Use cases that orchestrate the core and the adapters: sync and mirror, dedup, fixes, verification, closing."""
