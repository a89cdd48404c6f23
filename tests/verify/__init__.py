"""Measuring: verification, statistics, runners and containment, fixes, guards and bisection."""
