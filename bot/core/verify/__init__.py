"""Measuring a claim: the plan, outputs and counters, the statistics, the verdict's words, sweeps, suites and
bisection."""
