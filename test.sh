#!/usr/bin/env bash
# Runs ruff, mypy and the whole test suite, installing what they need first (Python packages, PostgreSQL binaries,
# and GitHub's OpenAPI description and webhook examples from npm into tests/.npm).
# Arguments go to pytest, e.g. ./test.sh -k sync -x, or ./test.sh tests/reading/test_sync.py -n 0 (one process)
set -euo pipefail
cd "$(dirname "$0")"
scripts/ensure-postgres
scripts/ensure-sshd
scripts/ensure-bwrap
scripts/ensure-build-tools
export PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 && scripts/ensure-browser  # Debian's chromium; pip never fetches a browser
scripts/ensure-npm-fixtures
scripts/bootstrap test,docs
# Parallel by default (pytest-xdist): two workers per core, each test file on one worker so that its module
# fixtures (built projects, servers) are made once; every worker starts its own PostgreSQL and sshd. Two per
# core because the real-process tests (workers killed, servers restarted, leases taken over) often wait:
# 8.6 min against 10.3 with one per core when measured (docs/benchmarks.md). The longest files go first
# (tests/conftest.py, SLOW_FIRST), not xdist's default of the files with the most tests. `-n 0` runs everything
# in this process, `-n N` picks the count.
parallel=(-n "$(( $(nproc) * 2 ))" --dist loadfile --no-loadscope-reorder)
for arg in "$@"; do
  case "$arg" in -n*|--numprocesses*) parallel=() ;; esac
done
.venv/bin/ruff check --quiet .  # the whole repository; any finding fails the run
.venv/bin/mypy  # bot/ and handlers/, as pyproject.toml says; the cache in .mypy_cache keeps a rerun quick
# The layers of ARCHITECTURE.md, as import-linter contracts in pyproject.toml; quiet unless one breaks.
layers=$(.venv/bin/lint-imports --no-logo 2>&1) || { printf '%s\n' "$layers"; exit 1; }
exec .venv/bin/python -m pytest ${parallel[@]+"${parallel[@]}"} "$@"
