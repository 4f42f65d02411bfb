"""IMEP's wall time ÷ vla-eval's on real LIBERO, with the plain loop as the baseline, in one run:

    bash bench/setup-vla-eval.sh libero && npm run build
    .venvs/vla-eval-libero/bin/python bench/libero_vs_vla_eval.py [--episodes 24] [--rounds 3] [--small 4]

The same episodes — env `libero-mem/top-drawer-cue` through sim-bridge's LiberoAdapter, seeds 720000 …, the
known-answer policy `libero-drawer-memory` with its reads intact, the env's own end (success or its 220-step
limit) and its `success` field — are run
  plain     by bench/libero_overhead.py's plain Python loop, in this process;
  IMEP      by `imep campaign run --through seal` (condition A only, --servers 1 --batch 1), bench/libero_overhead.py;
  vla-eval  by `vla-eval run --no-docker` (allenai/vla-evaluation-harness 0.8.0 from PyPI) of a benchmark class over
            the same adapter (bench/vla-eval/imep_vla_eval/sim_bridge_benchmark.py) against a vla-eval model server
            serving the same policy (memory_policy_server.py), one episode at a time as IMEP's --batch 1 does.
All three use this interpreter (IMEP_PYTHON = it, by its venv's physical path), so the simulator stack is the same files. Prints the wall
times, IMEP ÷ vla-eval and vla-eval ÷ plain, and checks that all three ran the same seeds with the same steps and
successes per seed in every run (exit 1 when not). Each of --rounds R rounds runs the three arms in turn, the order
rotated each round; the ratios are of median wall times. With --small K (default 4), R rounds over the first K
seeds run first, and the per-episode cost (median N-run − median K-run) / (N − K), where start-up and env make
cancel, is printed too (24 − 4 episodes by default: over 8 − 2 the difference drowned in load noise here, giving
vla-eval fewer seconds per episode than the plain loop it contains).
Wall-clock on a shared machine: compare ratios within one run.
"""

from __future__ import annotations

import statistics
import sys
import tempfile
from pathlib import Path

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH / "vla-eval"))

from imep_vla_eval import side_by_side  # noqa: E402 - imported after the sys.path entry above
from imep_vla_eval.side_by_side import IMEP, PLAIN, Arm  # noqa: E402 - imported after the sys.path entry above
from imep_vla_eval.vla_eval_arm import imep_python, run_vla_eval  # noqa: E402 - imported after the sys.path entry above
from libero_overhead import SEED0, imep_run, plain_loop  # noqa: E402 - imported after the sys.path entry above


def run_arm(arm: int, n: int) -> Arm:
    """One timed run of `arm` (PLAIN, IMEP, VLA) over seeds SEED0 … SEED0 + n − 1."""
    if arm == PLAIN:
        wall, _, sim_step, success, steps = plain_loop(n)
        SIM_STEP.append(sim_step)
        return Arm("plain Python loop", wall, success, steps)
    if arm == IMEP:
        wall, success, steps = imep_run(n, 1, python=imep_python())
        return Arm("IMEP --servers 1 --batch 1", wall, success, steps)
    with tempfile.TemporaryDirectory() as tmp:
        return run_vla_eval(
            sys.executable,
            Path(tmp),
            adapter="libero",
            env_id="libero-mem/top-drawer-cue",
            env_kwargs={},
            seed_start=SEED0,
            n=n,
            policy="libero-drawer-memory",
            module="imep_sim_bridge.libero_drawer_policy",
        )


SIM_STEP: list[float] = []  # LIBERO's mean env.step s of each plain run


def main() -> None:
    side_by_side.main(
        run_arm,
        seed0=SEED0,
        episodes=24,
        small=4,
        venv="vla-eval-libero",
        title=lambda: (
            f"libero-mem/top-drawer-cue, libero-drawer-memory (LIBERO env.step alone {statistics.median(SIM_STEP) * 1e3:.1f} ms/step, "
            f"no camera frames); python {sys.executable}"
        ),
        plain_counted="env make and the episodes, inside this bench's process (LIBERO is imported by the make)",
        before_large=SIM_STEP.clear,
    )


if __name__ == "__main__":
    main()
