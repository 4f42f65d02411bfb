#!/usr/bin/env bash
# The checks of the repository's Python (test-all.sh runs them): ruff's linter and formatter over what ruff.toml
# covers (sim-bridge/, bench/, scripts/, examples/), then the import-cycle check of sim-bridge's package. Each prints what
# it covered and how long it took; any finding fails.
#   bash scripts/py-checks.sh
# fix: .venvs/tools/bin/ruff check --fix sim-bridge bench scripts examples && .venvs/tools/bin/ruff format sim-bridge bench scripts examples
#      (after bash scripts/setup-tools.sh)
set -euo pipefail
cd "$(dirname "$0")/.."
bin="$(bash scripts/setup-tools.sh | sed -n 's/^IMEP_TOOLS_BIN=//p')"
ruff="$bin/ruff"
targets=(sim-bridge bench scripts examples) # the folders that hold the repository's Python
version="$("$ruff" --version)"
ms() { echo $((($(date +%s%N) - $1) / 1000000)); }
files="$("$ruff" check --show-files "${targets[@]}" | grep '\.py$' | sed "s|^$(pwd)/||")"
folders="$(cut -d/ -f1 <<<"$files" | sort -u | sed 's|$|/|' | paste -sd' ')"
t0=$(date +%s%N)
if ! "$ruff" check --no-fix --quiet "${targets[@]}"; then
  echo "py-checks: $version check failed (fix: $ruff check --fix ${targets[*]}; what it cannot fix, by hand)" >&2
  exit 1
fi
echo "py-checks: $version check: $(wc -l <<<"$files") files under $folders clean in $(ms "$t0") ms"
t0=$(date +%s%N)
if ! out="$("$ruff" format --check "${targets[@]}" 2>&1)"; then
  echo "$out" >&2
  echo "py-checks: $version format: the files above are not formatted (fix: $ruff format ${targets[*]})" >&2
  exit 1
fi
echo "py-checks: $version format --check: $(tail -1 <<<"$out") in $(ms "$t0") ms (ruff.toml [format] exclude: byte-frozen files)"
/usr/bin/python3 scripts/py-import-cycles.py sim-bridge/imep_sim_bridge
