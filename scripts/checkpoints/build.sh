#!/usr/bin/env bash
# Rebuilds the lite checkpoints from scratch: demonstrations (TS lite simulator) → training + ONNX export (Debian
# python3-torch 1.13, CPU) → model.json with hashes, checked by the TS runtime → competence measurement.
#
#   apt-get install -y python3-torch python3-onnx python3-numpy     # once, as root
#   bash scripts/checkpoints/build.sh [all|shell|rc]                # ≈ 4 min (shell) + ≈ 5 min (rc) on 2 cores
#
# shell: lite-memvla, lite-blind (ShellGameTouch-lite, episode bank). rc: lite-memvla-rc, lite-blind-rc
# (RememberColor3/5-lite, structured PCMB bank persisting across attempts).
#
# DEMOS (default /tmp/imep-demos) holds the demonstration sets; they are not committed.
set -euo pipefail
cd "$(dirname "$0")/../.."
DEMOS="${DEMOS:-/tmp/imep-demos}"
PY=/usr/bin/python3
WHAT="${1:-all}"
"$PY" -c 'import torch, onnx, numpy' 2>/dev/null || { echo "build.sh: needs Debian python3-torch python3-onnx python3-numpy (apt-get install -y python3-torch python3-onnx python3-numpy)" >&2; exit 1; }

if [ "$WHAT" = all ] || [ "$WHAT" = shell ]; then
npx tsx scripts/checkpoints/make-demos.ts --task shell --out "$DEMOS/shell" --episodes 1200 --seed-from 100000 --noise 0.02 --noise-seed 7

rm -rf checkpoints/lite-memvla checkpoints/lite-blind
"$PY" scripts/checkpoints/train.py --demos "$DEMOS/shell" --out checkpoints/lite-memvla --variant memvla --seed 1 > "$DEMOS/train-lite-memvla.log" 2>&1 &
memvla=$!
"$PY" scripts/checkpoints/train.py --demos "$DEMOS/shell" --out checkpoints/lite-blind --variant blind --seed 1 > "$DEMOS/train-lite-blind.log" 2>&1 &
blind=$!
wait "$memvla" || { tail -n 20 "$DEMOS/train-lite-memvla.log" >&2; exit 1; }
wait "$blind" || { tail -n 20 "$DEMOS/train-lite-blind.log" >&2; exit 1; }
grep -h '^train:' "$DEMOS/train-lite-memvla.log" "$DEMOS/train-lite-blind.log"

npx tsx scripts/checkpoints/write-manifest.ts --dir checkpoints/lite-memvla --name lite-memvla \
  --description "ShellGameTouch-lite (strict, camera blackout from step 6) policy that reads its episode bank: positive control"
npx tsx scripts/checkpoints/write-manifest.ts --dir checkpoints/lite-blind --name lite-blind \
  --description "Same architecture trained with memory inputs zeroed (memory weights exactly zero): negative control"

npx tsx scripts/checkpoints/measure.ts --checkpoint checkpoints/lite-memvla --checkpoint checkpoints/lite-blind --task shell --seed-from 0 --count 300
fi

if [ "$WHAT" = all ] || [ "$WHAT" = rc ]; then
npx tsx scripts/checkpoints/make-demos.ts --task rc3-retry --out "$DEMOS/rc3-retry" --episodes 400 --seed-from 200000 --noise 0.02 --noise-seed 7
npx tsx scripts/checkpoints/make-demos.ts --task rc5-retry --out "$DEMOS/rc5-retry" --episodes 400 --seed-from 300000 --noise 0.02 --noise-seed 7

rm -rf checkpoints/lite-memvla-rc checkpoints/lite-blind-rc
RC_DEMOS=(--demos "$DEMOS/rc3-retry" --demos "$DEMOS/rc5-retry")
"$PY" scripts/checkpoints/train_rc.py "${RC_DEMOS[@]}" --out checkpoints/lite-memvla-rc --variant memvla --seed 1 > "$DEMOS/train-lite-memvla-rc.log" 2>&1 &
memvla=$!
"$PY" scripts/checkpoints/train_rc.py "${RC_DEMOS[@]}" --out checkpoints/lite-blind-rc --variant blind --seed 1 > "$DEMOS/train-lite-blind-rc.log" 2>&1 &
blind=$!
wait "$memvla" || { tail -n 20 "$DEMOS/train-lite-memvla-rc.log" >&2; exit 1; }
wait "$blind" || { tail -n 20 "$DEMOS/train-lite-blind-rc.log" >&2; exit 1; }
grep -h '^train:' "$DEMOS/train-lite-memvla-rc.log" "$DEMOS/train-lite-blind-rc.log"

npx tsx scripts/checkpoints/write-manifest.ts --dir checkpoints/lite-memvla-rc --name lite-memvla-rc \
  --description "RememberColor3/5-lite (cue not re-shown on retry) policy whose structured PCMB bank keeps the attempt-1 cue record into attempt 2, and which decides from it: positive control"
npx tsx scripts/checkpoints/write-manifest.ts --dir checkpoints/lite-blind-rc --name lite-blind-rc \
  --description "Same architecture trained with memory inputs zeroed (memory weight exactly zero): negative control"

for task in rc3-retry rc5-retry; do
  npx tsx scripts/checkpoints/measure.ts --checkpoint checkpoints/lite-memvla-rc --checkpoint checkpoints/lite-blind-rc --task "$task" --seed-from 0 --count 300
done
fi
