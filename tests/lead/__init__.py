"""What the lead reads: digest, dashboards, notices, charts, the parity guard."""
