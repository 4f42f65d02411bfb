"""IMEP's wall time ÷ vla-eval's on real MIKASA-Robo, with the plain loop as the baseline, in one run:

    bash scripts/sims/mikasa.sh setup && bash bench/setup-vla-eval.sh mikasa && npm run build
    .venvs/vla-eval-mikasa/bin/python bench/mikasa_vs_vla_eval.py [--episodes 64] [--rounds 3] [--small 8]

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
"""

from __future__ import annotations

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
from imep_vla_eval.side_by_side import IMEP, PLAIN, Arm  # noqa: E402 - imported after the sys.path entry above
from imep_vla_eval.vla_eval_arm import imep_python, run_vla_eval  # noqa: E402 - imported after the sys.path entry above

START = 650000
ENV_ID = "mikasa/RememberColor3-VLA-v0"
KWARGS = {"obs_mode": "state", "sim_backend": "cpu", "control_mode": "pd_ee_delta_pos"}
UNIT = "mikasa-vs-vla-eval"


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


def plain_run(n: int) -> tuple[Arm, float]:
    """The plain loop as one process (start-up, imports, make, episodes); also its mean env.step s."""
    t0 = time.perf_counter()
    done = subprocess.run([sys.executable, str(BENCH / "mikasa_plain_loop.py"), str(START), str(n)], capture_output=True, text=True, check=False)
    wall = time.perf_counter() - t0
    if done.returncode != 0:
        sys.exit(f"bench: mikasa_plain_loop.py exited {done.returncode}: {done.stderr.strip().splitlines()[-1:]}")
    r = json.loads(done.stdout.strip().splitlines()[-1])
    success = {int(k): bool(v) for k, v in r["success"].items()}
    steps = {int(k): int(v) for k, v in r["steps_by_seed"].items()}
    return Arm("plain loop (one process)", wall, success, steps), r["env_step_s"] / r["steps"]


def imep_run(n: int, tmp: Path) -> Arm:
    proto = tmp / "mikasa-vs-vla-eval.yaml"
    proto.write_text(protocol(n))
    campaigns = tmp / "campaigns"
    cmd = [
        "node",
        str(ROOT / "dist/cli/main.js"),
        "campaign",
        "run",
        str(proto),
        "--through",
        "seal",
        "--batch",
        "1",
        "--campaigns-dir",
        str(campaigns),
    ]
    t0 = time.perf_counter()
    done = subprocess.run(cmd, cwd=ROOT, env={**os.environ, "IMEP_PYTHON": imep_python()}, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - t0
    if done.returncode != 0:
        sys.exit(f"bench: imep campaign run exited {done.returncode}: {done.stderr.strip().splitlines()[-1:]}")
    (unit,) = [d for d in campaigns.iterdir() if d.name.startswith(UNIT)]
    rows = [json.loads(line) for line in (unit / "rows" / "rows.jsonl").read_text().splitlines() if line]
    return Arm("IMEP --batch 1", wall, {r["seed"]: r["success"] for r in rows}, {r["seed"]: r["steps"] for r in rows})


def run_arm(arm: int, n: int) -> Arm:
    """One timed run of `arm` (PLAIN, IMEP, VLA) over seeds START … START + n − 1."""
    if arm == PLAIN:
        plain, sim_step = plain_run(n)
        SIM_STEP.append(sim_step)
        return plain
    with tempfile.TemporaryDirectory() as tmp:
        if arm == IMEP:
            return imep_run(n, Path(tmp))
        return run_vla_eval(
            sys.executable,
            Path(tmp),
            adapter="mikasa",
            env_id=ENV_ID,
            env_kwargs=KWARGS,
            seed_start=START,
            n=n,
            policy="remember-color-memory",
            module=None,
        )


SIM_STEP: list[float] = []  # the mean env.step s of each plain run


def main() -> None:
    side_by_side.main(
        run_arm,
        seed0=START,
        episodes=64,
        small=8,
        venv="vla-eval-mikasa",
        title=lambda: (
            f"{ENV_ID} (PhysX CPU, state), remember-color-memory (env.step alone {statistics.median(SIM_STEP) * 1e3:.2f} ms/step); "
            f"python {sys.executable}"
        ),
        plain_counted="the whole mikasa_plain_loop.py process (start-up, imports, gym.make, the episodes)",
        before_large=SIM_STEP.clear,
    )


if __name__ == "__main__":
    main()
