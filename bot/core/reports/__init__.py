"""A report read into a record: markdown scanned, front matter, sections, prose facts, tables."""
