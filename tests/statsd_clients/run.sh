#!/usr/bin/env bash
# Runs one of this folder's node scripts (clients.mjs) with its arguments; installs hot-shots and
# statsd-client from package-lock.json first when node_modules is missing (npm ci: exactly the
# locked versions; node_modules is never committed).
#   tests/statsd_clients/run.sh clients.mjs 8125
set -euo pipefail
cd "$(dirname "$0")"
if [ ! -d node_modules ]; then
  npm ci --no-audit --no-fund --silent >&2
fi
exec node "$@"
