"""What the lead reads: the digest, the dashboard issue, the parity report."""
