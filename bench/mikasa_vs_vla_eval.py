"""IMEP's wall time ÷ vla-eval's on real MIKASA-Robo, with the plain loop as the baseline, in one run:

    bash scripts/sims/mikasa.sh setup && bash bench/setup-vla-eval.sh mikasa && npm run build
    .venvs/vla-eval-mikasa/bin/python bench/mikasa_vs_vla_eval.py [--episodes 64] [--rounds 3] [--small 8]
        [--checkpoint checkpoints/mikasa-rc3-memvla] [--parallel 2]

The same episodes — RememberColor3-VLA-v0 (PhysX CPU, state observations: the adapter's `joints` and `cubes`),
seeds 650000 …, the known-answer policy `remember-color-memory` with its reads intact, the env's own end (its
time limit) and its `success` — are run
  plain     by bench/mikasa_plain_loop.py (MIKASA's evaluation-style gym loop), as one process;
  IMEP      by `imep campaign run --through seal` of bench/mikasa-overhead.ts's one-condition protocol (A), --batch 1;
  vla-eval  by `vla-eval run --no-docker` (allenai/vla-evaluation-harness 0.8.0 from PyPI) of a benchmark class over
            sim-bridge's MIKASA adapter (bench/vla-eval/imep_vla_eval/sim_bridge_benchmark.py) against a vla-eval
            model server serving the same policy (memory_policy_server.py), one episode at a time.
vla-eval's own MIKASA benchmark resets without a seed, so it cannot run these seeds; the benchmark class here
resets with seed_start + episode_idx. All three use this interpreter (IMEP_PYTHON = it, by its venv's physical path). Prints the wall times,
IMEP ÷ vla-eval and vla-eval ÷ plain, and checks seeds, steps and successes per seed agree in every run (exit 1 when not).
Each of --rounds R rounds runs the three arms in turn, the order rotated each round; the ratios are of median
wall times. With --small K (default 8), R rounds over the first K seeds run first, and the per-episode cost
(median N-run − median K-run) / (N − K), where start-up and env make cancel, is printed (64 − 8 episodes by
default: MIKASA's episodes take ~0.2 s, so a difference over 16 of them drowns in start-up noise).

--checkpoint DIR: every arm runs that IMEP checkpoint (model.json + ONNX graphs, the bank outside them) instead of
the hosted known-answer policy — plain and vla-eval through onnxruntime in Python (the policy host's imep-checkpoint,
over imep_sim_bridge.onnx_checkpoint), IMEP in process with onnxruntime-node (a `checkpoint:` protocol, no policy
host) — and the plain loop makes and steps the env through sim-bridge's MIKASA adapter, as the other two arms do
(mikasa_plain_loop.py --adapter). Every arm reports IMEP's actionDigest per seed, so the arms must also agree on
every action's float32 bytes.
--parallel 2: two episodes at once — the plain loop as two processes over the two halves of the seeds, IMEP
--servers 2 --batch 2, vla-eval as 2 shards of one run against one model server (a slot per shard) — and the
table's episodes/h is the throughput.
"""

from __future__ import annotations

import hashlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
sys.path.insert(0, str(BENCH / "vla-eval"))

from imep_vla_eval import side_by_side  # noqa: E402 - imported after the sys.path entry above
from imep_vla_eval.checkpoint_protocol import checkpoint_protocol  # noqa: E402 - imported after the sys.path entry above
from imep_vla_eval.side_by_side import IMEP, PLAIN, Arm, Options, imep_clock, split_seeds  # noqa: E402 - imported after the sys.path entry above
from imep_vla_eval.vla_eval_arm import imep_python, run_vla_eval  # noqa: E402 - imported after the sys.path entry above

START = 650000
ENV_ID = "mikasa/RememberColor3-VLA-v0"
KWARGS = {"obs_mode": "state", "sim_backend": "cpu", "control_mode": "pd_ee_delta_pos"}
UNIT = "mikasa-vs-vla-eval"
METHOD_VISIBLE = ["joints", "cubes"]
EVALUATOR_ONLY = [
    "success",
    "success_once",
    "reward",
    "terminated",
    "truncated",
    "elapsed_steps",
    "oracle_info",
    "oracle_color",
    "seed",
    "task",
    "attempt",
]


def protocol(n: int) -> str:
    """protocols/mikasa-remembercolor.yaml's head (simulator, env, policy, memory) with condition A only over n seeds."""
    base = (ROOT / "protocols/mikasa-remembercolor.yaml").read_text()
    head = base[: base.index("\nseeds:")].replace("\nid: mikasa-remembercolor\n", f"\nid: {UNIT}\n")
    return f"""{head}
seeds: {{ bands: [{{ start: {START}, end: {START + n - 1} }}] }}
n: {n}
attempts: {{ count: 1, registered: 1 }}
conditions:
  - {{ id: A, kind: A }}
waves:
  - {{ id: 1, conditions: [A], anchor: A }}
estimands:
  - {{ id: SR_A, kind: successRate, condition: A }}
executionFailures: {{ policy: record }}
allowlists:
  methodVisible: [joints, cubes]
  evaluatorOnly: [success, success_once, reward, terminated, truncated, elapsed_steps, oracle_info, oracle_color, seed, task, attempt]
"""


def plain_run(n: int, opts: Options) -> tuple[Arm, float]:
    """The plain loop as one process (start-up, imports, make, episodes) — or, with opts.parallel 2, two at once over
    the two halves of the seeds; also its mean env.step s."""
    extra = [] if opts.checkpoint is None else [str(opts.checkpoint), "--adapter"]
    t0 = time.perf_counter()
    procs = [
        subprocess.Popen(
            [sys.executable, str(BENCH / "mikasa_plain_loop.py"), str(s0), str(k), *extra], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        for s0, k in split_seeds(START, n, opts.parallel)
    ]
    done = [(p, *p.communicate()) for p in procs]
    wall = time.perf_counter() - t0
    success: dict[int, bool] = {}
    steps: dict[int, int] = {}
    digest: dict[int, str] = {}
    step_s, total = 0.0, 0
    for p, stdout, stderr in done:
        if p.returncode != 0:
            sys.exit(f"bench: mikasa_plain_loop.py exited {p.returncode}: {stderr.strip().splitlines()[-1:]}")
        r = json.loads(stdout.strip().splitlines()[-1])
        success.update({int(k): bool(v) for k, v in r["success"].items()})
        steps.update({int(k): int(v) for k, v in r["steps_by_seed"].items()})
        digest.update({int(k): str(v) for k, v in r["digest"].items()})
        step_s, total = step_s + r["env_step_s"], total + r["steps"]
    how = "" if opts.checkpoint is None else "adapter env, "
    label = f"plain loop ({how}one process)" if opts.parallel == 1 else f"plain loop ({how}{opts.parallel} processes)"
    return Arm(label, wall, success, steps, digest), step_s / total


def imep_run(n: int, tmp: Path, opts: Options) -> Arm:
    proto = tmp / "mikasa-vs-vla-eval.yaml"
    if opts.checkpoint is None:
        proto.write_text(protocol(n))
    else:
        proto.write_text(
            checkpoint_protocol(
                unit=UNIT,
                checkpoint=opts.checkpoint,
                adapter="mikasa",
                env_id=ENV_ID,
                env_kwargs=KWARGS,
                start=START,
                n=n,
                method_visible=METHOD_VISIBLE,
                evaluator_only=EVALUATOR_ONLY,
            )
        )
    campaigns = tmp / "campaigns"
    k = str(opts.parallel)
    cmd = ["node", str(ROOT / "dist/cli/main.js"), "campaign", "run", str(proto), "--through", "seal", "--servers", k, "--batch", k]
    cmd += ["--campaigns-dir", str(campaigns)]
    t0 = time.perf_counter()
    done = subprocess.run(cmd, cwd=ROOT, env={**os.environ, "IMEP_PYTHON": imep_python()}, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - t0
    if done.returncode != 0:
        sys.exit(f"bench: imep campaign run exited {done.returncode}: {done.stderr.strip().splitlines()[-1:]}")
    (unit,) = [d for d in campaigns.iterdir() if d.name.startswith(UNIT)]
    rows = [json.loads(line) for line in (unit / "rows" / "rows.jsonl").read_text().splitlines() if line]
    how = "" if opts.checkpoint is None else ", ONNX in process"
    return Arm(
        f"IMEP --servers {k} --batch {k}{how}",
        wall,
        {r["seed"]: r["success"] for r in rows},
        {r["seed"]: r["steps"] for r in rows},
        {r["seed"]: r["actionDigest"] for r in rows},
        imep_clock((unit / "rows" / "timings.jsonl").read_text()),
    )


def run_arm(arm: int, n: int, opts: Options) -> Arm:
    """One timed run of `arm` (PLAIN, IMEP, VLA) over seeds START … START + n − 1."""
    if arm == PLAIN:
        plain, sim_step = plain_run(n, opts)
        SIM_STEP.append(sim_step)
        return plain
    with tempfile.TemporaryDirectory() as tmp:
        if arm == IMEP:
            return imep_run(n, Path(tmp), opts)
        serve = ["--args.policy", "remember-color-memory"] if opts.checkpoint is None else ["--args.checkpoint", str(opts.checkpoint)]
        return run_vla_eval(
            sys.executable,
            Path(tmp),
            adapter="mikasa",
            env_id=ENV_ID,
            env_kwargs=KWARGS,
            seed_start=START,
            n=n,
            serve_args=serve,
            label="" if opts.checkpoint is None else ", ONNX (Python)",
            shards=opts.parallel,
        )


SIM_STEP: list[float] = []  # the mean env.step s of each plain run


def policy_name(opts: Options) -> str:
    if opts.checkpoint is None:
        return "remember-color-memory"
    return f"checkpoint {opts.checkpoint.name} (model.json sha256 {hashlib.sha256((opts.checkpoint / 'model.json').read_bytes()).hexdigest()[:12]})"


def main() -> None:
    side_by_side.main(
        run_arm,
        seed0=START,
        episodes=64,
        small=8,
        venv="vla-eval-mikasa",
        title=lambda opts: (
            f"{ENV_ID} (PhysX CPU, state), {policy_name(opts)} (env.step alone {statistics.median(SIM_STEP) * 1e3:.2f} ms/step); "
            f"python {sys.executable}"
        ),
        plain_counted=(
            "the whole mikasa_plain_loop.py process or processes (start-up, imports, env make — gym.make, or the adapter's make with "
            "--checkpoint — and the episodes)"
        ),
        before_large=SIM_STEP.clear,
    )


if __name__ == "__main__":
    main()
