#!/usr/bin/env bash
# The whole test suite: system packages, npm install, build, typecheck, vitest, pytest (sim-bridge).
# This is the README's test command and what .ci/run runs.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup-system.sh
if [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  npm ci --no-audit --no-fund
fi
npm run build
npm run typecheck
npx vitest run
PY="${IMEP_PYTHON:-/usr/bin/python3}"
if [ -d sim-bridge/tests ]; then
  (cd sim-bridge && "$PY" -m pytest -q -p no:cacheprovider)
fi
