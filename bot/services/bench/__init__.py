"""Measuring: verification, its samples and sweeps, references, bench runs on every runner, fixes, closing, guards
and bisection."""
