#!/usr/bin/env bash
# LeRobot's policies (scripts/policies/lerobot-requirements.txt) in .venvs/lerobot, from PyPI by name, pinned,
# --no-deps (the file is the closure of what the policy modules import): lerobot 0.4.4, torch 2.13.0 (CPU, on this
# machine's disk), torchvision 0.28.0, and pyzmq + msgpack + numpy for IMEP's policy host. `pip check` must print
# exactly the file's `# pip-check:` lines (lerobot's caps below torch 2.13 and the packages no policy module imports).
# Used by sim-bridge/tests/test_lerobot_policy.py, test/campaign/lerobot-policy.test.ts and docs/lerobot.md.
# ~1.5 GB, ~2 min here. A venv whose stamp matches is left as it is. Last line: LEROBOT_PYTHON=<abs path>.
set -euo pipefail
cd "$(dirname "$0")/../.."
# shellcheck source=../lib/pinned-venv.sh
source scripts/lib/pinned-venv.sh
pinned_venv setup-lerobot "$PWD/.venvs/lerobot" "$PWD/scripts/policies/lerobot-requirements.txt" --no-deps
echo "LEROBOT_PYTHON=$PWD/.venvs/lerobot/bin/python"
