#!/usr/bin/env bash
# Runs perfbot on its embedded defaults (SQLite in ./instance, this checkout as the watched repo),
# installing what it needs first. Any arguments are passed to the `perfbot` command instead.
set -euo pipefail
cd "$(dirname "$0")"
scripts/bootstrap
if [ "$#" -gt 0 ]; then
  exec .venv/bin/perfbot "$@"
fi
.venv/bin/perfbot sync --repo . --history
exec .venv/bin/perfbot list
