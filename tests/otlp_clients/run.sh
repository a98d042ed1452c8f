#!/usr/bin/env bash
# Runs one of this folder's node scripts (export.mjs) with its arguments; installs the
# OpenTelemetry SDK and exporters from package-lock.json first when node_modules is missing
# (npm ci: exactly the locked versions; node_modules is never committed).
#   tests/otlp_clients/run.sh export.mjs http://127.0.0.1:4318
set -euo pipefail
cd "$(dirname "$0")"
if [ ! -d node_modules ]; then
  npm ci --no-audit --no-fund --silent >&2
fi
exec node "$@"
