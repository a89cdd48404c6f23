"""perfbot: reports in git become records; records stay in step with GitHub."""
