#!/usr/bin/env bash
# The policy-server stack (scripts/policies/requirements.txt) in .venvs/policies, from PyPI by name, pinned, --no-deps
# (the file is the whole closure; `pip check` must pass): openpi-server 0.1.0, openpi-client 0.1.2, vla-eval 0.8.0,
# torch 2.13.0 (CPU, on this machine's disk), onnxruntime 1.30.0, pyzmq. Used by the policy-server tests and the
# examples of docs/your-policy.md; the servers run from it unmodified. ~1.1 GB, ~20–60 s here. A venv whose stamp
# matches is left as it is. Last line: POLICIES_PYTHON=<abs path>.
set -euo pipefail
cd "$(dirname "$0")/../.."
# shellcheck source=../lib/pinned-venv.sh
source scripts/lib/pinned-venv.sh
pinned_venv setup-policies "$PWD/.venvs/policies" "$PWD/scripts/policies/requirements.txt" --no-deps
echo "POLICIES_PYTHON=$PWD/.venvs/policies/bin/python"
