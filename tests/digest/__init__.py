"""The weekly digest: what it says, its markdown, its schedule, posting it once per week."""
