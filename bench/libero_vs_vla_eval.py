"""IMEP's wall time ÷ vla-eval's on real LIBERO, with the plain loop as the baseline, in one run:

    bash bench/setup-vla-eval.sh libero && npm run build
    .venvs/vla-eval-libero/bin/python bench/libero_vs_vla_eval.py [--episodes 8] [--small 2]

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
successes per seed (exit 1 when not). With --small K (default 2) each arm also runs the first K seeds first, and
the per-episode cost (run of N − run of K) / (N − K), where start-up and env make cancel, is printed too.
Wall-clock on a shared machine: compare ratios within one run.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH / "vla-eval"))

from imep_vla_eval.side_by_side import Arm, compare, notes, per_episode  # noqa: E402
from imep_vla_eval.vla_eval_arm import run_vla_eval  # noqa: E402
from libero_overhead import ROOT, SEED0, imep_run, plain_loop  # noqa: E402


def arms(n: int) -> tuple[Arm, Arm, Arm, float]:
    """The three arms over seeds SEED0 … SEED0 + n − 1, one after another; also LIBERO's mean env.step s."""
    plain_wall, _, sim_step, plain_success, plain_steps = plain_loop(n)
    imep_wall, imep_success, imep_steps = imep_run(n, 1)
    with tempfile.TemporaryDirectory() as tmp:
        vla = run_vla_eval(
            sys.executable, Path(tmp), adapter="libero", env_id="libero-mem/top-drawer-cue", env_kwargs={},
            seed_start=SEED0, n=n, policy="libero-drawer-memory", module="imep_sim_bridge.libero_drawer_policy",
        )
    return (
        Arm("plain Python loop", plain_wall, plain_success, plain_steps),
        Arm("IMEP --servers 1 --batch 1", imep_wall, imep_success, imep_steps),
        Arm("vla-eval 0.8.0 run --no-docker", vla.wall, vla.success, vla.steps),
        sim_step,
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--episodes", type=int, default=8)
    parser.add_argument("--small", type=int, default=2, help="also run each arm over the first SMALL seeds and print the per-episode difference (0: off)")
    args = parser.parse_args()
    n, n_small = args.episodes, args.small
    if not 0 <= n_small < n:
        sys.exit(f"bench: --small must be in 0 … --episodes − 1 (got {n_small}, --episodes {n})")
    if not (ROOT / "dist/cli/main.js").is_file():
        sys.exit("bench: dist/cli/main.js is missing — run npm run build first")
    if not (Path(sys.executable).parent / "vla-eval").is_file():
        sys.exit(f"bench: {sys.executable} has no vla-eval next to it — run with .venvs/vla-eval-libero/bin/python (bash bench/setup-vla-eval.sh libero)")
    small = arms(n_small)[:3] if n_small else None
    plain, imep, vla, sim_step = arms(n)
    ok = compare(
        f"libero-mem/top-drawer-cue, libero-drawer-memory (LIBERO env.step alone {sim_step * 1e3:.1f} ms/step, no camera frames); python {sys.executable}",
        list(range(SEED0, SEED0 + n)), plain, imep, vla,
    )
    if small is not None:
        ok = per_episode(small, (plain, imep, vla), list(range(SEED0, SEED0 + n_small)), n) and ok
    notes("env make and the episodes, inside this bench's process (LIBERO is imported by the make)")
    if not ok:
        sys.exit(1)


if __name__ == "__main__":
    main()
