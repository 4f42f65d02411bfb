#!/usr/bin/env bash
# The training venv of the real-simulator checkpoints: .venvs/train with scripts/checkpoints/train-requirements.txt
# (torch 2.13.0 CPU, onnx, onnxruntime, pyarrow), from PyPI by name. Only for rebuilding checkpoints: the test
# command trains nothing (the checkpoints are committed). ~1.3 GB, ~1–2 min here. Last line: TRAIN_PYTHON=<path>.
set -euo pipefail
cd "$(dirname "$0")/../.."
venv="$PWD/.venvs/train"
reqs="$PWD/scripts/checkpoints/train-requirements.txt"
want=$(cat "$reqs" "$0" | sha256sum | cut -c1-16)
if [ -x "$venv/bin/python" ] && [ "$(cat "$venv/.imep-stamp" 2>/dev/null)" = "$want" ]; then
  echo "setup-train: $venv is up to date" >&2
else
  t0=$(date +%s)
  rm -rf "$venv"
  /usr/bin/python3 -m venv "$venv"
  "$venv/bin/python" -m pip install -q --disable-pip-version-check -r "$reqs" >&2
  echo "$want" > "$venv/.imep-stamp"
  echo "setup-train: installed in $(($(date +%s) - t0)) s ($(du -sh "$venv" | cut -f1))" >&2
fi
echo "TRAIN_PYTHON=$venv/bin/python"
