#!/usr/bin/env bash
# Runs one of this folder's node scripts (page_test.mjs, first_paint.mjs) with its arguments;
# installs puppeteer-core from package-lock.json first when node_modules is missing (npm ci:
# exactly the locked versions; node_modules is never committed).
#   tests/browser/run.sh page_test.mjs '{"url": ...}'
set -euo pipefail
cd "$(dirname "$0")"
if [ ! -d node_modules ]; then
  npm ci --no-audit --no-fund --silent >&2
fi
exec node "$@"
