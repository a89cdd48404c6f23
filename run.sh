#!/usr/bin/env bash
# Runs perfbot on its embedded defaults, installing what it needs first: the service in local mode
# (SQLite in ./instance, no GitHub, no network) watching this checkout, whose example reports become
# records and whose new commits act as pushes. Any arguments run that perfbot command instead.
set -euo pipefail
cd "$(dirname "$0")"
scripts/bootstrap
if [ "$#" -gt 0 ]; then
  exec .venv/bin/perfbot "$@"
fi
exec .venv/bin/perfbot serve --repo .
