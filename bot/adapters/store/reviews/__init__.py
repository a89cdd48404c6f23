"""What dedup keeps in the store: retrieval features, cached reviewer answers, people's overrides."""
