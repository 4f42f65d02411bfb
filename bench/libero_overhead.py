"""IMEP's overhead on real LIBERO, as ratios measured in one run (run with the LIBERO venv's python):

    .venvs/libero/bin/python bench/libero_overhead.py [--episodes 8] [--baseline-cli OTHER/dist/cli/main.js]

The same episodes — env `libero-mem/top-drawer-cue`, seeds 720000 …, the hosted policy
`libero-drawer-memory` with its reads intact — are stepped
  (1) by a plain Python loop inside one process: make the env, then per episode reset and
      policy.infer → env.step until done (memory.read answered in-process, nothing recorded);
  (2) by IMEP: `imep campaign run --through seal` of a protocol with condition A only over the same seeds
      (IMEP starts the sim-bridge server and the policy host, every read goes through memory.read and
      IMEP's read hook, rows are durable), with `--servers 1 --batch 1` and `--servers 2 --batch 2` (one
      LIBERO env per server: a batch of B slots makes B envs, ~7 s each on this CPU, which a larger
      batch on a 2-core machine only adds).
It prints each wall time, the ratios (2)/(1), steps/s, and the simulator's own step time (the mean of
LIBERO's `env.step` in loop (1)). Timings are wall-clock on a shared machine: compare ratios within a run.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "sim-bridge"))

from imep_sim_bridge.adapters.libero import LiberoAdapter  # noqa: E402 - imported after the sys.path entry above
from imep_sim_bridge.libero_drawer_policy import LiberoDrawerMemoryPolicy  # noqa: E402 - imported after the sys.path entry above
from imep_sim_bridge.spec import split  # noqa: E402 - imported after the sys.path entry above

sys.path.insert(0, str(ROOT / "bench" / "vla-eval"))
from imep_vla_eval.side_by_side import action_digest  # noqa: E402 - imported after the sys.path entry above

SEED0 = 720000
PROTOCOL = """version: 1
id: libero-overhead-bench
title: bench — libero-drawer-memory, condition A only
simulator: {{ kind: sim-bridge, adapter: libero }}
envs:
  - id: libero-mem/top-drawer-cue
policy:
  runtime: remote
  name: libero-drawer-memory
  module: imep_sim_bridge.libero_drawer_policy
memory: {{ bank: episode-local, banks: [perceptual], capacity: 8, k: 1, consolidation: fifo }}
seeds:
  bands:
    - {{ start: {start}, end: {end} }}
n: {n}
attempts: {{ count: 1, registered: 1 }}
conditions:
  - {{ id: A, kind: A, description: "reads intact" }}
waves:
  - {{ id: 1, conditions: [A], anchor: A }}
estimands:
  - {{ id: SR_A, kind: successRate, condition: A }}
criteria: []
gates: []
executionFailures: {{ policy: record }}
allowlists:
  methodVisible: [state, handle, cue, instruction]
  evaluatorOnly: [goal, success, checkSuccess, drawerOpen, drawerClosed, drawerJoint, reward, seed, initStateId, task]
"""


class PassThrough:
    def read(self, bank, ctx, items):
        return [dict(i) for i in items]


def plain_loop(
    n: int, start: int = SEED0, checkpoint: str | None = None
) -> tuple[float, int, float, dict[int, bool], dict[int, int], dict[int, str]]:
    """(wall s including make, total steps, mean env.step s, success per seed, steps per seed, action digest per
    seed) over seeds start … start + n − 1; the policy is libero-drawer-memory, or the IMEP checkpoint folder
    `checkpoint` run by onnxruntime in Python (sim-bridge's imep-checkpoint policy, imep_sim_bridge/checkpoint_policy.py)."""
    t0 = time.perf_counter()
    env = LiberoAdapter().make("libero-mem/top-drawer-cue", {})
    spec = env.spec()
    if checkpoint is None:
        policy = LiberoDrawerMemoryPolicy(max_batch=1)
    else:
        from imep_sim_bridge.checkpoint_policy import CheckpointPolicy

        policy = CheckpointPolicy(max_batch=1, checkpoint=checkpoint)
    steps, step_time = 0, 0.0
    success: dict[int, bool] = {}
    steps_by_seed: dict[int, int] = {}
    digest: dict[int, str] = {}
    for seed in range(start, start + n):
        obs, _ = split(spec, env.reset(seed, {}, None).fields)
        policy.reset(0, f"bench-{seed}")
        steps_by_seed[seed] = 0
        actions = []
        while True:
            action = policy.infer(0, obs, PassThrough())["action"]
            actions.append(np.asarray(action, np.float32))
            s0 = time.perf_counter()
            raw = env.step(action)
            step_time += time.perf_counter() - s0
            steps += 1
            steps_by_seed[seed] += 1
            obs, evaluator = split(spec, raw.fields)
            if raw.done:
                success[seed] = bool(evaluator["success"])
                break
        digest[seed] = action_digest(actions)
    env.close()
    return time.perf_counter() - t0, steps, step_time / steps, success, steps_by_seed, digest


def imep_run(
    n: int, servers: int, cli: Path = ROOT / "dist/cli/main.js", python: str = sys.executable, protocol: str | None = None
) -> tuple[float, dict[int, bool], dict[int, int], dict[int, str], str]:
    """(wall s of `imep campaign run --through seal`, success, steps and action digest per seed from its rows, the
    text of its rows/timings.jsonl);
    `protocol`: the protocol's text (unit id libero-overhead-bench; default PROTOCOL over seeds SEED0 …)."""
    with tempfile.TemporaryDirectory() as tmp:
        proto = Path(tmp) / "libero-overhead.yaml"
        proto.write_text(protocol if protocol is not None else PROTOCOL.format(start=SEED0, end=SEED0 + n - 1, n=n))
        campaigns = Path(tmp) / "campaigns"
        cmd = [
            "node",
            str(cli),
            "campaign",
            "run",
            str(proto),
            "--through",
            "seal",
            "--campaigns-dir",
            str(campaigns),
            "--servers",
            str(servers),
            "--batch",
            str(servers),
        ]
        env = {**os.environ, "IMEP_PYTHON": python}
        t0 = time.perf_counter()
        done = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, check=False)
        wall = time.perf_counter() - t0
        if done.returncode != 0:
            sys.exit(f"bench: imep campaign run failed ({done.returncode}): {done.stderr.strip().splitlines()[-1:]}")
        (unit,) = [d for d in campaigns.iterdir() if d.name.startswith("libero-overhead-bench")]
        rows = [json.loads(line) for line in (unit / "rows" / "rows.jsonl").read_text().splitlines() if line]
        return (
            wall,
            {r["seed"]: r["success"] for r in rows},
            {r["seed"]: r["steps"] for r in rows},
            {r["seed"]: r["actionDigest"] for r in rows},
            (unit / "rows" / "timings.jsonl").read_text(),
        )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--episodes", type=int, default=8)
    parser.add_argument(
        "--baseline-cli",
        type=Path,
        help="also time IMEP --servers 1 --batch 1 with this imep CLI (dist/cli/main.js of a build of another commit: before/after in one run)",
    )
    args = parser.parse_args()
    n = args.episodes
    plain, steps, sim_step, _, _, _ = plain_loop(n)
    baseline = imep_run(n, 1, args.baseline_cli)[0] if args.baseline_cli is not None else None
    one = imep_run(n, 1)[0]
    two = imep_run(n, 2)[0]
    print(f"libero-mem/top-drawer-cue, {n} episodes, {steps} steps (plain loop)")
    print(f"  LIBERO env.step alone: {sim_step * 1e3:.1f} ms/step (robosuite 1.4.0, MuJoCo 2.3.7, no camera frames)")
    print(f"  plain Python loop:          {plain:7.1f} s  {steps / plain:6.1f} steps/s")
    if baseline is not None:
        print(f"  baseline CLI ({args.baseline_cli}) --servers 1 --batch 1: {baseline:7.1f} s  ratio IMEP/plain = {baseline / plain:.3f}")
    print(f"  IMEP --servers 1 --batch 1: {one:7.1f} s  {steps / one:6.1f} steps/s  ratio IMEP/plain = {one / plain:.3f}")
    print(f"  IMEP --servers 2 --batch 2: {two:7.1f} s  {steps / two:6.1f} steps/s  ratio IMEP/plain = {two / plain:.3f}")
    print(f"  steps/s --servers 2 / --servers 1 = {one / two:.3f}")


if __name__ == "__main__":
    main()
