#!/usr/bin/env bash
# Runs page_test.mjs with its one argument; installs puppeteer-core from package-lock.json first
# when node_modules is missing (npm ci: exactly the locked versions; never committed).
set -euo pipefail
cd "$(dirname "$0")"
if [ ! -d node_modules ]; then
  npm ci --no-audit --no-fund --silent >&2
fi
exec node page_test.mjs "$1"
