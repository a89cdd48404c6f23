"""Reports in step with git and the tracker: sync, record identities, the mirror, lint, fact review."""
