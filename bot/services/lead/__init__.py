"""What the lead reads: the dashboard issue (the digest and the parity guard have packages of their own)."""
