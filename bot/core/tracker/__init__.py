"""What perfbot reads from and writes to the issue tracker: issue views, fix claims, branch names, people's
overrides, and text bounded and scrubbed before it is posted."""
