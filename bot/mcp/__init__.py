"""`perfbot mcp`: the store's records, the linter and dedup as Model Context Protocol tools (read-only)."""
