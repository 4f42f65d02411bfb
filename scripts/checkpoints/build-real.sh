#!/usr/bin/env bash
# Rebuilds the real-simulator checkpoints from scratch: demonstrations on real MIKASA-Robo / real LIBERO (LeRobot
# dataset v3.0, record-real-demos.sh) → training + ONNX export + parity check (torch 2.13.0 CPU, train_state.py) →
# model.json with hashes, checked by the TS runtime → the protocols' checkpoint.sha256 re-bound.
#
#   bash scripts/setup-sims.sh mikasa libero && bash scripts/checkpoints/setup-train.sh    # once
#   bash scripts/checkpoints/build-real.sh [all|mikasa|libero]
#
# Cost here (2 cores, shared; 2026-12-05): demonstrations 145 s (MIKASA, 400 episodes) and 212 s (LIBERO, 300
# episodes); training 12 + 10 s (MIKASA) and 46 + 34 s (LIBERO), one thread each, memvla and blind in parallel.
# A from-scratch run reproduced every committed ONNX file, parity.json and train-report.json byte for byte.
# IMEP_DEMOS_DIR (default /tmp/imep-demos/real) holds the demonstration sets; they are not committed.
set -euo pipefail
cd "$(dirname "$0")/../.."
export IMEP_DEMOS_DIR="${IMEP_DEMOS_DIR:-/tmp/imep-demos/real}"
DEMOS="$IMEP_DEMOS_DIR"
PY="$PWD/.venvs/train/bin/python"
WHAT="${1:-all}"
[ -x "$PY" ] || { echo "build-real.sh: no training venv: bash scripts/checkpoints/setup-train.sh" >&2; exit 1; }

build() { # task demos-name protocol-prefix checkpoint-prefix description-of-task
  local task="$1" demos="$2" proto="$3" ckpt="$4" what="$5"
  bash scripts/checkpoints/record-real-demos.sh "$demos"
  local set="$DEMOS/$([ "$demos" = mikasa ] && echo mikasa-rc3 || echo libero-drawer)"
  rm -rf "checkpoints/$ckpt-memvla" "checkpoints/$ckpt-blind"
  "$PY" scripts/checkpoints/train_state.py --task "$task" --demos "$set" --out "checkpoints/$ckpt-memvla" --variant memvla --seed 1 > "$DEMOS/train-$ckpt-memvla.log" 2>&1 &
  local m=$!
  "$PY" scripts/checkpoints/train_state.py --task "$task" --demos "$set" --out "checkpoints/$ckpt-blind" --variant blind --seed 1 > "$DEMOS/train-$ckpt-blind.log" 2>&1 &
  local b=$!
  wait "$m" || { tail -n 20 "$DEMOS/train-$ckpt-memvla.log" >&2; exit 1; }
  wait "$b" || { tail -n 20 "$DEMOS/train-$ckpt-blind.log" >&2; exit 1; }
  grep -h '^train_state:\|^parity:' "$DEMOS/train-$ckpt-memvla.log" "$DEMOS/train-$ckpt-blind.log"
  npx tsx scripts/checkpoints/write-manifest.ts --dir "checkpoints/$ckpt-memvla" --name "$ckpt-memvla" \
    --description "$what: learned policy that writes one record per step into IMEP's episode bank and reads the top-4 by attention (positive control)"
  npx tsx scripts/checkpoints/write-manifest.ts --dir "checkpoints/$ckpt-blind" --name "$ckpt-blind" \
    --description "$what: the memoryless twin (same architecture and demonstrations, reads blocked in training, memory weight exactly zero): negative control"
  for v in memvla blind; do
    local sha
    sha=$(sha256sum "checkpoints/$ckpt-$v/model.json" | cut -d' ' -f1)
    sed -i "s/^  sha256: [0-9a-f]*$/  sha256: $sha/" "protocols/$proto-$v.yaml"
    echo "build-real.sh: protocols/$proto-$v.yaml bound to checkpoints/$ckpt-$v/model.json sha256 $sha"
  done
}

if [ "$WHAT" = all ] || [ "$WHAT" = mikasa ]; then
  build mikasa-rc3 mikasa mikasa-learned mikasa-rc3 "MIKASA-Robo RememberColor3-VLA-v0 (state observations, pd_ee_delta_pos)"
fi
if [ "$WHAT" = all ] || [ "$WHAT" = libero ]; then
  build libero-drawer libero libero-learned libero-drawer "LIBERO libero-mem/top-drawer-cue (proprioception, handle position, cue)"
fi
