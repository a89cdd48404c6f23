"""The pure domain core: records, parsing, linting and the rules that decide; no I/O here."""
