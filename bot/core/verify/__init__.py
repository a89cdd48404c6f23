"""Measuring a claim: the plan, outputs and counters, the statistics, the verdict's words, sweeps and
suites (bisection has its own package, bot/bisect/)."""
