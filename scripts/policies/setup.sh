#!/usr/bin/env bash
# The policy-server stack (scripts/policies/requirements.txt) in .venvs/policies, from PyPI by name, pinned, --no-deps
# (the file is the whole closure; `pip check` must pass): openpi-server 0.1.0, openpi-client 0.1.2, vla-eval 0.8.0,
# torch 2.13.0 (CPU, on this machine's disk), onnxruntime 1.30.0, pyzmq. Used by the policy-server tests and the
# examples of docs/your-policy.md; the servers run from it unmodified. ~1.1 GB, ~20–60 s here. A venv whose stamp
# matches is left as it is. Last line: POLICIES_PYTHON=<abs path>.
set -euo pipefail
cd "$(dirname "$0")/../.."
venv="$PWD/.venvs/policies"
reqs="$PWD/scripts/policies/requirements.txt"
want=$(cat "$reqs" "$0" | sha256sum | cut -c1-16)
if [ -x "$venv/bin/python" ] && [ "$(cat "$venv/.imep-stamp" 2>/dev/null)" = "$want" ]; then
  echo "setup-policies: $venv is up to date" >&2
else
  t0=$(date +%s)
  rm -rf "$venv"
  /usr/bin/python3 -m venv "$venv"
  "$venv/bin/python" -m pip install -q --disable-pip-version-check --no-deps -r "$reqs" >&2
  "$venv/bin/python" -m pip check >&2
  echo "$want" > "$venv/.imep-stamp"
  echo "setup-policies: installed in $(($(date +%s) - t0)) s ($(du -sh "$venv" | cut -f1))" >&2
fi
echo "POLICIES_PYTHON=$venv/bin/python"
