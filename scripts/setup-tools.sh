#!/usr/bin/env bash
# The Python tools of the repository's checks (ruff: lint and format), from PyPI by package name at the exact
# versions of scripts/tools-requirements.txt, in the git-ignored virtual environment .venvs/tools:
#   bash scripts/setup-tools.sh   # last line: IMEP_TOOLS_BIN=<abs path of the venv's bin folder>
# The venv is remade only when this script or the pins changed since it was made (a stamp in the venv).
set -euo pipefail
cd "$(dirname "$0")/.."
root="$(pwd)"
venv="$root/.venvs/tools"
pins="$root/scripts/tools-requirements.txt"
stamp_file="$venv/.imep-stamp"
want="$(cat "$root/scripts/setup-tools.sh" "$pins" | sha256sum | cut -d' ' -f1)"
if [ -x "$venv/bin/python" ] && [ -f "$stamp_file" ] && [ "$(cat "$stamp_file")" = "$want" ]; then
  :
else
  t0=$(date +%s)
  rm -rf "$venv"
  # the system python (python3-venv: scripts/setup-system.sh installs it)
  /usr/bin/python3 -m venv "$venv"
  "$venv/bin/python" -m pip install -q --disable-pip-version-check -r "$pins" >&2
  echo "$want" >"$stamp_file"
  echo "setup-tools: $venv: $(grep -v '^#' "$pins" | tr '\n' ' ')in $(($(date +%s) - t0)) s" >&2
fi
echo "IMEP_TOOLS_BIN=$venv/bin"
