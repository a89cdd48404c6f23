#!/usr/bin/env bash
# Runs the whole test suite, installing what it needs first (Python packages, PostgreSQL binaries,
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
exec .venv/bin/python -m pytest "$@"
