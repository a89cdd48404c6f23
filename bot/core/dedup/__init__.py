"""Which reports overlap: the features compared, retrieval over them, the reviewers' verdicts."""
