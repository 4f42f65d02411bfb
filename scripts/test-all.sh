#!/usr/bin/env bash
# The whole test suite: system packages, npm install, build, typecheck, vitest, pytest (sim-bridge).
# This is the README's test command and what .ci/run runs.
set -euo pipefail
cd "$(dirname "$0")/.."
# onnxruntime-node's install step downloads its CUDA provider on linux/x64 unless told to skip it: its own switch
# is this variable (an `onnxruntime-node-install` key in .npmrc made npm warn on every npm/npx call).
export ONNXRUNTIME_NODE_INSTALL=skip
# a line every 15 s while a venv's pip runs: the pip command, the time so far and last time's (scripts/lib/setup-progress.sh)
# shellcheck source=lib/setup-progress.sh
source scripts/lib/setup-progress.sh
bash scripts/setup-system.sh
if [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  npm ci --no-audit --no-fund
fi
npm run build
npm run typecheck
# the dependency rule set: arrows of scripts/import-rules.json, no cycle, every folder entered through its face
node scripts/import-graph.mjs > /dev/null
node scripts/check-doc-links.mjs # every relative link and back-quoted repo path in README.md, docs/**/*.md exists
# the formatter: the TypeScript and scripts as prettier (.prettierrc.json) writes them (fix: npm run format)
npm run --silent format:check
# the Python: ruff's linter and formatter (pinned in scripts/tools-requirements.txt, installed into .venvs/tools;
# ruff.toml: sim-bridge/, bench/, scripts/) and no import cycle inside sim-bridge's package; each says what it
# covered and how long it took (scripts/py-checks.sh says how to fix what it finds)
bash scripts/py-checks.sh
# test/cluster/cluster.test.ts runs array jobs on a one-node SLURM cluster (it FAILS under CI=true without
# one): start it when this runs as root with apt (always so in CI), and stop it afterwards if started here.
if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
  if ! sinfo --noheader --format=%t 2>/dev/null | grep -Eq 'idle|mix|alloc'; then
    if bash scripts/slurm/start-cluster.sh; then
      trap 'bash scripts/slurm/stop-cluster.sh || true' EXIT
    else
      echo "test-all: could not start the one-node SLURM cluster (scripts/slurm/start-cluster.sh); the cluster test will fail under CI=true and skip otherwise" >&2
    fi
  fi
fi
# The policy-server stack in .venvs/policies (scripts/policies/setup.sh: openpi-server, openpi-client, vla-eval, torch
# CPU, onnxruntime, onnx; ~1.2 GB and ~30 s the first time, nothing once its stamp matches): the policy-server tests
# and the runnable examples of docs/your-policy.md (test/examples/) run from it.
t0=$(date +%s)
with_progress "policies setup" bash scripts/policies/setup.sh > /dev/null
echo "test-all: .venvs/policies ready in $(($(date +%s) - t0)) s ($(du -sh .venvs/policies | cut -f1)); test/examples runs docs/your-policy.md's examples from it"
# LeRobot 0.4.4 with the CPU torch in .venvs/lerobot (scripts/policies/lerobot.sh; ~1.5 GB, ~110 s the first time):
# the hosted LeRobot policy's tests (sim-bridge/tests/test_lerobot_policy.py, test/campaign/lerobot-policy.test.ts).
t0=$(date +%s)
with_progress "lerobot setup" bash scripts/policies/lerobot.sh > /dev/null
echo "test-all: .venvs/lerobot ready in $(($(date +%s) - t0)) s ($(du -sh .venvs/lerobot | cut -f1)); the hosted LeRobot policy's tests run from it"
# The stock tools a reviewer checks IMEP's evidence with, without IMEP, in .venvs/formats (scripts/formats/setup.sh:
# pyarrow, pandas, polars, DuckDB, in-toto, securesystemslib; ~630 MB, ~15–40 s the first time): `imep export`'s
# Parquet is read back with each reader (test/export) and the unit's in-toto Statement verified with securesystemslib
# (test/signing).
t0=$(date +%s)
with_progress "formats setup" bash scripts/formats/setup.sh > /dev/null
echo "test-all: .venvs/formats ready in $(($(date +%s) - t0)) s ($(du -sh .venvs/formats | cut -f1)); the Parquet and in-toto checks run from it"
npx vitest run
PY="${IMEP_PYTHON:-/usr/bin/python3}"
if [ -d sim-bridge/tests ]; then
  (cd sim-bridge && "$PY" -m pytest -q -p no:cacheprovider)
fi
# Real simulators (LIBERO, MIKASA-Robo …): installed from the registries into .venvs/, then driven for real.
if [ -n "$(ls scripts/sims/*.sh 2>/dev/null)" ]; then
  bash scripts/test-real-sims.sh
fi
