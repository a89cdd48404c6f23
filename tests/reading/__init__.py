"""Reading reports: parsing, lint, audit, sync and the mirror."""
