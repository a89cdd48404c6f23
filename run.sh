#!/usr/bin/env bash
# Runs perfbot on its embedded defaults, installing what it needs first: the service in local mode
# (SQLite in ./instance, no GitHub, no network) watching the demo repository `perfbot demo` creates in
# instance/demo the first time (a small C runtime, reports about it, a fix branch `perfbot verify` can
# measure), whose new commits act as pushes. Any arguments run that perfbot command instead, in the
# directory run.sh was called from: `../perfbot/run.sh check` checks the repository you are in.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
"$here/scripts/bootstrap"
if [ "$#" -gt 0 ]; then
  exec "$here/.venv/bin/perfbot" "$@"
fi
cd "$here"
# Only a missing demo is created: an existing one keeps its commits, records and bench runs.
if [ ! -d instance/demo/.git ]; then
  .venv/bin/perfbot demo instance/demo
fi
exec .venv/bin/perfbot serve --repo instance/demo
