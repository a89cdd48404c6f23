#!/usr/bin/env bash
# Runs ruff, mypy and the whole test suite, installing what they need first (Python packages, PostgreSQL binaries,
# and GitHub's OpenAPI description and webhook examples from npm into tests/.npm).
# Arguments go to pytest, e.g. ./test.sh -k sync -x
set -euo pipefail
cd "$(dirname "$0")"
scripts/ensure-postgres
scripts/ensure-sshd
scripts/ensure-bwrap
scripts/ensure-build-tools
export PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 && scripts/ensure-browser  # Debian's chromium; pip never fetches a browser
scripts/ensure-npm-fixtures
scripts/bootstrap test,docs
.venv/bin/ruff check --quiet .  # the whole repository; any finding fails the run
.venv/bin/mypy  # bot/ and handlers/, as pyproject.toml says; the cache in .mypy_cache keeps a rerun quick
exec .venv/bin/python -m pytest "$@"
