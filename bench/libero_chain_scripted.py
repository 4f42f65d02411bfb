"""How often the scripted chain executor opens each drawer on real LIBERO (run with the LIBERO venv's python):

    MUJOCO_GL=osmesa .venvs/libero/bin/python bench/libero_chain_scripted.py [--inits 50] [--executor-seed S]

Env `LIBERO-ChainDrawers-scripted`, through the adapter's own make / reset / step (what a ChainBench
replay calls): for every drawer k and scene seeds 0 … inits − 1 (the seed selects init state seed mod 50
of drawer k's task), one query whose hidden drawer is k and the decision k. It prints, per drawer, how
many executions LIBERO's `check_success()` judged done, the seeds that failed, and the steps to done
(min / median / max). A competence measurement, not a timing: the figures do not depend on the machine.
Put another checkout's sim-bridge first on PYTHONPATH to measure its controller with the same script.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

if not any(Path(p, "imep_sim_bridge").is_dir() for p in sys.path if p):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "sim-bridge"))

from imep_sim_bridge.adapters.libero_chain import LiberoChainAdapter


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--inits", type=int, default=50, help="scene seeds 0 … inits − 1 per drawer (default 50)")
    parser.add_argument("--executor-seed", type=int, default=None, help="executorSeed of every query (default: the scene seed)")
    args = parser.parse_args()
    os.environ.setdefault("MUJOCO_GL", "osmesa")
    t0 = time.time()
    env = LiberoChainAdapter().make("LIBERO-ChainDrawers-scripted", {"K": 2})
    try:
        registry = json.loads(env.registry)
        print(f"controller {registry['drawers'][0]['controllerFile']} sha256 {registry['drawers'][0]['controllerSha256']}")
        print(f"motor source {registry['motorSource']}; make {time.time() - t0:.1f} s")
        total = 0
        for k, drawer in enumerate(registry["drawers"]):
            done_at: list[int] = []
            failed: list[int] = []
            t1 = time.time()
            for seed in range(args.inits):
                options = {"role": "query", "object": "bowl", "drawer": k}
                if args.executor_seed is not None:
                    options["executorSeed"] = args.executor_seed
                env.reset(seed, options, None)
                fields = env.step(np.array([k], np.float32)).fields
                if fields["executed"]:
                    done_at.append(int(fields["doneAt"]))
                else:
                    failed.append(seed)
            total += len(done_at)
            steps = f"steps to done min {min(done_at)} median {int(np.median(done_at))} max {max(done_at)}" if done_at else "never done"
            print(f"drawer {k} ({drawer['drawer']}): opened {len(done_at)}/{args.inits}; failed seeds {failed}; {steps}; {time.time() - t1:.1f} s")
        print(f"all: {total}/{args.inits * len(registry['drawers'])}")
    finally:
        env.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
