"""Adopting perfbot: configuration, init and check, the CLI, the demo, the documentation."""
