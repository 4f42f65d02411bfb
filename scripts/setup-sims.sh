#!/usr/bin/env bash
# Installs real simulator stacks into git-ignored virtual environments, one per simulator:
#   bash scripts/setup-sims.sh libero [mikasa …]
# Each NAME has its recipe in scripts/sims/NAME.sh (Debian packages it needs, the venv .venvs/NAME with
# sim-bridge's extra imep-sim-bridge[NAME], from the registries only). The last line each prints is the
# python IMEP's supervisor should use for it: IMEP_PYTHON=…
# While a recipe runs, a line every 15 s says how long it has run, the pip command it is on and the time it took last
# time (scripts/lib/setup-progress.sh; the recipes themselves are unchanged: their venv stamps hash their text).
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=lib/setup-progress.sh
source scripts/lib/setup-progress.sh
if [ "$#" -eq 0 ]; then
  echo "usage: bash scripts/setup-sims.sh NAME [NAME…]   (simulators: $(cd scripts/sims && ls *.sh 2>/dev/null | sed 's/\.sh$//' | tr '\n' ' '))" >&2
  exit 2
fi
for name in "$@"; do
  if [ ! -f "scripts/sims/$name.sh" ]; then
    echo "setup-sims: no simulator named '$name' (known: $(cd scripts/sims && ls *.sh 2>/dev/null | sed 's/\.sh$//' | tr '\n' ' '))" >&2
    exit 2
  fi
  with_progress "$name setup" bash "scripts/sims/$name.sh" setup
done
