#!/usr/bin/env bash
# Installs each real simulator stack (scripts/sims/NAME.sh setup) and runs its real-simulator tests
# (scripts/sims/NAME.sh test), printing what each adds to the suite's time. Called by scripts/test-all.sh.
# IMEP_REAL_SIMS="libero mikasa" picks which (default: every scripts/sims/*.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=lib/setup-progress.sh
source scripts/lib/setup-progress.sh
names="${IMEP_REAL_SIMS:-$(cd scripts/sims && ls *.sh 2>/dev/null | sed 's/\.sh$//' | tr '\n' ' ')}"
summary=()
for name in $names; do
  t0=$(date +%s)
  with_progress "$name setup" bash "scripts/sims/$name.sh" setup
  t1=$(date +%s)
  bash "scripts/sims/$name.sh" test
  t2=$(date +%s)
  summary+=("real $name: install $((t1 - t0)) s, tests $((t2 - t1)) s")
done
for line in "${summary[@]}"; do echo "test-real-sims: $line"; done
