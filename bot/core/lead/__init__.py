"""The lead's view: milestones, the weekly digest, the campaign dashboard, notices and their charts."""
