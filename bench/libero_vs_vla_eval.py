"""IMEP's wall time ÷ vla-eval's on real LIBERO, with the plain loop as the baseline, in one run:

    bash bench/setup-vla-eval.sh libero && npm run build
    .venvs/vla-eval-libero/bin/python bench/libero_vs_vla_eval.py [--episodes 8]

The same episodes — env `libero-mem/top-drawer-cue` through sim-bridge's LiberoAdapter, seeds 720000 …, the
known-answer policy `libero-drawer-memory` with its reads intact, the env's own end (success or its 220-step
limit) and its `success` field — are run
  plain     by bench/libero_overhead.py's plain Python loop, in this process;
  IMEP      by `imep campaign run --through seal` (condition A only, --servers 1 --batch 1), bench/libero_overhead.py;
  vla-eval  by `vla-eval run --no-docker` (allenai/vla-evaluation-harness 0.8.0 from PyPI) of a benchmark class over
            the same adapter (bench/vla-eval/imep_vla_eval/sim_bridge_benchmark.py) against a vla-eval model server
            serving the same policy (memory_policy_server.py), one episode at a time as IMEP's --batch 1 does.
All three use this interpreter (IMEP_PYTHON = it), so the simulator stack is the same files. Prints the wall
times, IMEP ÷ vla-eval and vla-eval ÷ plain, and checks that all three ran the same seeds with the same steps and
successes per seed (exit 1 when not). Wall-clock on a shared machine: compare ratios within one run.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH / "vla-eval"))

from imep_vla_eval.side_by_side import Arm, compare  # noqa: E402
from imep_vla_eval.vla_eval_arm import run_vla_eval  # noqa: E402
from libero_overhead import ROOT, SEED0, imep_run, plain_loop  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--episodes", type=int, default=8)
    n = parser.parse_args().episodes
    if not (ROOT / "dist/cli/main.js").is_file():
        sys.exit("bench: dist/cli/main.js is missing — run npm run build first")
    if not (Path(sys.executable).parent / "vla-eval").is_file():
        sys.exit(f"bench: {sys.executable} has no vla-eval next to it — run with .venvs/vla-eval-libero/bin/python (bash bench/setup-vla-eval.sh libero)")
    seeds = list(range(SEED0, SEED0 + n))
    plain_wall, _, sim_step, plain_success, plain_steps = plain_loop(n)
    imep_wall, imep_success, imep_steps = imep_run(n, 1)
    with tempfile.TemporaryDirectory() as tmp:
        vla = run_vla_eval(
            sys.executable, Path(tmp), adapter="libero", env_id="libero-mem/top-drawer-cue", env_kwargs={},
            seed_start=SEED0, n=n, policy="libero-drawer-memory", module="imep_sim_bridge.libero_drawer_policy",
        )
    ok = compare(
        f"libero-mem/top-drawer-cue, libero-drawer-memory (LIBERO env.step alone {sim_step * 1e3:.1f} ms/step, no camera frames); python {sys.executable}",
        seeds,
        Arm("plain Python loop", plain_wall, plain_success, plain_steps),
        Arm("IMEP --servers 1 --batch 1", imep_wall, imep_success, imep_steps),
        Arm("vla-eval 0.8.0 run --no-docker", vla.wall, vla.success, vla.steps),
        plain_counted="env make and the episodes, inside this bench's process (LIBERO is imported by the make)",
    )
    if not ok:
        sys.exit(1)


if __name__ == "__main__":
    main()
