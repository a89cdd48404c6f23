"""What crosses the wire: webhooks in (signed, replayed, malformed, served), GitHub API calls and their limits,
the doubles' wire format, outgoing webhooks."""
