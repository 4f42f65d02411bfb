"""IMEP's wall time ÷ vla-eval's on real LIBERO, with the plain loop as the baseline, in one run:

    bash bench/setup-vla-eval.sh libero && npm run build
    .venvs/vla-eval-libero/bin/python bench/libero_vs_vla_eval.py [--episodes 24] [--rounds 3] [--small 4]
        [--checkpoint checkpoints/libero-drawer-memvla] [--parallel 2]

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

--checkpoint DIR: every arm runs that IMEP checkpoint (model.json + ONNX graphs, the bank outside them) instead of
the hosted known-answer policy — plain and vla-eval through onnxruntime in Python (the policy host's imep-checkpoint,
over imep_sim_bridge.onnx_checkpoint), IMEP in process with onnxruntime-node (a `checkpoint:` protocol, no policy
host). Every arm reports IMEP's actionDigest per seed, so the arms must also agree on every action's float32 bytes.
--parallel 2: two episodes at once — the plain loop as two processes over the two halves of the seeds, IMEP
--servers 2 --batch 2, vla-eval as 2 shards of one run against one model server (a slot per shard) — and the
table's episodes/h is the throughput.
"""

from __future__ import annotations

import hashlib
import multiprocessing
import statistics
import sys
import tempfile
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH / "vla-eval"))

from imep_vla_eval import side_by_side  # noqa: E402 - imported after the sys.path entry above
from imep_vla_eval.checkpoint_protocol import checkpoint_protocol  # noqa: E402 - imported after the sys.path entry above
from imep_vla_eval.side_by_side import IMEP, PLAIN, Arm, Options, imep_clock, split_seeds  # noqa: E402 - imported after the sys.path entry above
from imep_vla_eval.vla_eval_arm import imep_python, run_vla_eval  # noqa: E402 - imported after the sys.path entry above
from libero_overhead import SEED0, imep_run, plain_loop  # noqa: E402 - imported after the sys.path entry above

ENV_ID = "libero-mem/top-drawer-cue"
UNIT = "libero-overhead-bench"  # libero_overhead.imep_run finds the unit by this id
METHOD_VISIBLE = ["state", "handle", "cue", "instruction"]
EVALUATOR_ONLY = ["goal", "success", "checkSuccess", "drawerOpen", "drawerClosed", "drawerJoint", "reward", "seed", "initStateId", "task"]


def plain_run(n: int, opts: Options) -> Arm:
    """The plain loop in this process (env make and episodes) — or, with opts.parallel 2, in two processes at once
    over the two halves of the seeds (spawned: their start-up and LIBERO's imports counted)."""
    ckpt = None if opts.checkpoint is None else str(opts.checkpoint)
    if opts.parallel == 1:
        wall, _, sim_step, success, steps, digest = plain_loop(n, SEED0, ckpt)
        SIM_STEP.append(sim_step)
        return Arm("plain Python loop", wall, success, steps, digest)
    parts = split_seeds(SEED0, n, opts.parallel)
    t0 = time.perf_counter()
    with multiprocessing.get_context("spawn").Pool(len(parts)) as pool:
        results = pool.starmap(plain_loop, [(k, s0, ckpt) for s0, k in parts])
    wall = time.perf_counter() - t0
    SIM_STEP.append(statistics.mean(r[2] for r in results))
    merged: tuple[dict, dict, dict] = ({}, {}, {})
    for r in results:
        for into, part in zip(merged, r[3:]):
            into.update(part)
    return Arm(f"plain Python loop ({len(parts)} processes)", wall, *merged)


def run_arm(arm: int, n: int, opts: Options) -> Arm:
    """One timed run of `arm` (PLAIN, IMEP, VLA) over seeds SEED0 … SEED0 + n − 1."""
    if arm == PLAIN:
        return plain_run(n, opts)
    if arm == IMEP:
        proto = None
        if opts.checkpoint is not None:
            proto = checkpoint_protocol(
                unit=UNIT,
                checkpoint=opts.checkpoint,
                adapter="libero",
                env_id=ENV_ID,
                env_kwargs={},
                start=SEED0,
                n=n,
                method_visible=METHOD_VISIBLE,
                evaluator_only=EVALUATOR_ONLY,
            )
        wall, success, steps, digest, timings = imep_run(n, opts.parallel, python=imep_python(), protocol=proto)
        how = "" if opts.checkpoint is None else ", ONNX in process"
        return Arm(f"IMEP --servers {opts.parallel} --batch {opts.parallel}{how}", wall, success, steps, digest, imep_clock(timings))
    with tempfile.TemporaryDirectory() as tmp:
        return run_vla_eval(
            sys.executable,
            Path(tmp),
            adapter="libero",
            env_id=ENV_ID,
            env_kwargs={},
            seed_start=SEED0,
            n=n,
            serve_args=(
                ["--args.policy", "libero-drawer-memory", "--args.module", "imep_sim_bridge.libero_drawer_policy"]
                if opts.checkpoint is None
                else ["--args.checkpoint", str(opts.checkpoint)]
            ),
            label="" if opts.checkpoint is None else ", ONNX (Python)",
            shards=opts.parallel,
        )


SIM_STEP: list[float] = []  # LIBERO's mean env.step s of each plain run


def policy_name(opts: Options) -> str:
    if opts.checkpoint is None:
        return "libero-drawer-memory"
    return f"checkpoint {opts.checkpoint.name} (model.json sha256 {hashlib.sha256((opts.checkpoint / 'model.json').read_bytes()).hexdigest()[:12]})"


def main() -> None:
    side_by_side.main(
        run_arm,
        seed0=SEED0,
        episodes=24,
        small=4,
        venv="vla-eval-libero",
        title=lambda opts: (
            f"{ENV_ID}, {policy_name(opts)} (LIBERO env.step alone {statistics.median(SIM_STEP) * 1e3:.1f} ms/step, "
            f"no camera frames); python {sys.executable}"
        ),
        plain_counted=(
            "env make and the episodes, inside this bench's process (LIBERO is imported by the make); with --parallel 2, "
            "two spawned processes from start to exit"
        ),
        before_large=SIM_STEP.clear,
    )


if __name__ == "__main__":
    main()
