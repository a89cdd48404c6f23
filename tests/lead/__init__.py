"""What the lead reads: dashboards, notices, charts (the digest and the parity guard have folders of their own)."""
