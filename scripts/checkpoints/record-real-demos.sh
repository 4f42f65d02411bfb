#!/usr/bin/env bash
# The recipe of the real-simulator demonstration sets (issue #33 item 1), in LeRobot dataset v3.0 layout
# (sim-bridge/imep_sim_bridge/demos/): the known-answer hosted policies, run in-process on real MIKASA-Robo and
# real LIBERO, their clean actions the labels, executed with Gaussian noise on the motion dims (not the gripper).
#   bash scripts/checkpoints/record-real-demos.sh [mikasa|libero|all]    # default all; IMEP_DEMOS_DIR (default /tmp/imep-demos/real)
# Needs the venvs of `bash scripts/setup-sims.sh mikasa` and `… libero` (pyarrow is in both extras).
# The data stays out of git; this script is what is committed. Seeds: 900000–900399 (MIKASA) and 910000–910299
# (LIBERO), disjoint from every evaluation band of protocols/*.yaml (sim-bridge/tests/test_demo_seeds.py checks it).
# MIKASA: σ = 0.03 (normalised action units), not 0.1: with σ 0.1 the expert succeeded on 1 of 4 episodes (its
# success needs the arm static at the last step); σ 0.05: 13/16; σ 0.03: 32/32.
# LIBERO: the expert is libero-drawer-memory-reactive (the same memory use as libero-drawer-memory; its motion
# phases end when the arm or the fingers have settled, not after fixed step counts). From the fixed-count expert's
# demonstrations (200 episodes, σ 0.03) the learned policy reached 4/12 closed-loop: at a waypoint its "wait" and
# "go" steps look the same to a learner that sees only the state, so it learned to wait. σ 0.05 (more states).
# Measured (2 shared cores, 2026-12-05): MIKASA 400 episodes, 10000 frames, expert success 381/400 = 0.9525 (its
# failures: the right cube, the arm not static at the last step), 510 s, 2.2 MB; LIBERO 300 episodes, 20085
# frames, expert success 299/300, 211 s.
set -euo pipefail
cd "$(dirname "$0")/../.."
root="$PWD"
out="${IMEP_DEMOS_DIR:-/tmp/imep-demos/real}"
which="${1:-all}"
mkdir -p "$out"

mikasa() {
  (cd sim-bridge && "$root/.venvs/mikasa/bin/python" -m imep_sim_bridge record-demos --adapter mikasa \
    --env mikasa/RememberColor3-VLA-v0 --kwargs '{"obs_mode":"state","sim_backend":"cpu","control_mode":"pd_ee_delta_pos"}' \
    --policy remember-color-memory --seeds 900000:900399 --noise 0.03 --noise-seed 7 --out "$out/mikasa-rc3")
}

libero() {
  (cd sim-bridge && "$root/.venvs/libero/bin/python" -m imep_sim_bridge record-demos --adapter libero \
    --env libero-mem/top-drawer-cue --policy libero-drawer-memory-reactive --module imep_sim_bridge.libero_drawer_reactive_policy \
    --seeds 910000:910299 --noise 0.05 --noise-seed 7 --out "$out/libero-drawer")
}

case "$which" in
  mikasa) mikasa ;;
  libero) libero ;;
  all) mikasa && libero ;;
  *) echo "usage: bash scripts/checkpoints/record-real-demos.sh [mikasa|libero|all]" >&2; exit 2 ;;
esac
