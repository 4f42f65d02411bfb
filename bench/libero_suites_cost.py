"""What LIBERO's standard suites and the memory task cost per make, reset and step (run with the LIBERO venv's python):

    .venvs/libero/bin/python bench/libero_suites_cost.py [cost|byseed|frames|hold|reactive] [--suites …] [--seeds 0-49]

  cost    task 0 of each suite, default mode, at 64 and 256 px: make, two resets (the model reloaded), 20 no-op steps
  byseed  libero_spatial/0 with `init_state: by-seed` (the model kept) at 64 and 256 px, and the default at 64 px
  frames  libero-mem/top-drawer-cue at resolution 0 (no camera), 32, 64, 128
  hold    one episode of the memoryless control `libero-hold` on task 0 of each suite, init state 0, 64 px
  reactive  `libero-top-drawer-reactive` on libero/libero_90/7 by-seed, one episode per init state of --seeds, 64 px
One JSON line per measurement. Wall-clock on a shared machine: compare within a run (docs/simulators/libero.md).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "sim-bridge"))

from imep_sim_bridge.adapters.libero import SUITES, LiberoAdapter
from imep_sim_bridge.libero_hold_policy import HOLD_ACTION, LiberoHoldPolicy
from imep_sim_bridge.libero_top_drawer_reactive_policy import LiberoTopDrawerReactivePolicy
from imep_sim_bridge.spec import split

NO_OP = np.asarray(HOLD_ACTION, np.float32)


def measure(env_id: str, kwargs: dict, seeds: tuple[int, ...], steps: int = 20) -> dict:
    t0 = time.perf_counter()
    env = LiberoAdapter().make(env_id, kwargs)
    made = time.perf_counter() - t0
    resets = []
    for seed in seeds:
        r0 = time.perf_counter()
        env.reset(seed, {}, None)
        resets.append(round(time.perf_counter() - r0, 2))
    s0 = time.perf_counter()
    for _ in range(steps):
        env.step(NO_OP)
    step = (time.perf_counter() - s0) / steps
    env.close()
    return {"env": env_id, "kwargs": kwargs, "make_s": round(made, 2), "reset_s": resets, "step_s": round(step, 4)}


def hold_episode(suite: str) -> dict:
    env = LiberoAdapter().make(f"libero/{suite}/0", {"init_state": "by-seed", "resolution": 64})
    policy = LiberoHoldPolicy(max_batch=1)
    t0 = time.perf_counter()
    raw, steps = env.reset(0, {}, None), 0
    policy.reset(0, "hold")
    while not raw.done:
        raw = env.step(policy.infer(0, {}, None)["action"])
        steps += 1
    took = time.perf_counter() - t0
    env.close()
    return {
        "env": f"libero/{suite}/0",
        "initStateId": 0,
        "success": bool(raw.fields["success"]),
        "steps": steps,
        "s_per_step": round(took / steps, 4),
    }


def reactive_episodes(seeds: list[int]) -> list[dict]:
    env = LiberoAdapter().make("libero/libero_90/7", {"init_state": "by-seed", "resolution": 64})
    spec, policy, out = env.spec(), LiberoTopDrawerReactivePolicy(max_batch=1), []
    for seed in seeds:
        raw, steps = env.reset(seed, {}, None), 0
        policy.reset(0, f"ep-{seed}")
        while not raw.done:
            obs, _ = split(spec, raw.fields)
            raw, steps = env.step(policy.infer(0, obs, None)["action"]), steps + 1
        out.append({"env": "libero/libero_90/7", "initStateId": seed, "success": bool(raw.fields["success"]), "steps": steps})
    env.close()
    ok = [r for r in out if r["success"]]
    out.append({"opened": len(ok), "of": len(out), "failed_init_states": [r["initStateId"] for r in out if not r["success"]]})
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("what", choices=("cost", "byseed", "frames", "hold", "reactive"))
    parser.add_argument("--suites", default=",".join(SUITES))
    parser.add_argument("--seeds", default="0-49", help="init states for `reactive`: A-B")
    args = parser.parse_args()
    suites = args.suites.split(",")
    if args.what == "cost":
        rows = [measure(f"libero/{s}/0", {"resolution": r}, (3, 4)) for r in (64, 256) for s in suites]
    elif args.what == "byseed":
        rows = [measure("libero/libero_spatial/0", {"init_state": "by-seed", "resolution": r}, (0, 1, 2), 30) for r in (64, 256)]
        rows.append(measure("libero/libero_spatial/0", {"resolution": 64}, (0, 1, 2), 30))
    elif args.what == "frames":
        rows = [measure("libero-mem/top-drawer-cue", {"resolution": r}, (720000, 720001, 720002), 30) for r in (0, 32, 64, 128)]
    elif args.what == "hold":
        rows = [hold_episode(s) for s in suites]
    else:
        first, last = (int(x) for x in args.seeds.split("-"))
        rows = reactive_episodes(list(range(first, last + 1)))
    for row in rows:
        print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main()
