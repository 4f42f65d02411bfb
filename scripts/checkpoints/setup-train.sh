#!/usr/bin/env bash
# The training venv of the real-simulator checkpoints: .venvs/train with scripts/checkpoints/train-requirements.txt
# (torch 2.13.0 CPU, onnx, onnxruntime, pyarrow), from PyPI by name. Only for rebuilding checkpoints: the test
# command trains nothing (the checkpoints are committed). ~1.3 GB, ~1–2 min here. Last line: TRAIN_PYTHON=<path>.
set -euo pipefail
cd "$(dirname "$0")/../.."
# shellcheck source=../lib/pinned-venv.sh
source scripts/lib/pinned-venv.sh
pinned_venv setup-train "$PWD/.venvs/train" "$PWD/scripts/checkpoints/train-requirements.txt"
echo "TRAIN_PYTHON=$PWD/.venvs/train/bin/python"
