"""What the digest, the dashboards, the notices and /metrics read and keep in the store."""
