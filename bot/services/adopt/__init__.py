"""Adopting perfbot: a first .perfbot.toml guessed, every report's programs run once."""
