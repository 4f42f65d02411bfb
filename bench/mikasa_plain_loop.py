"""The baseline of bench/mikasa-overhead.ts: MIKASA-Robo's evaluation-style loop in one Python process.

    $IMEP_PYTHON bench/mikasa_plain_loop.py SEED_START N [CHECKPOINT_DIR] [--adapter]

gym.make once, then per seed env.reset(seed=…) and env.step(torch action) until the time limit, with the same
policy (remember-color-memory, or the IMEP checkpoint in CHECKPOINT_DIR run by onnxruntime in Python —
imep_sim_bridge/checkpoint_policy.py, the policy host's imep-checkpoint; its bank read in-process, nothing intervened) seeing the same
two fields the adapter builds (joints, cubes) — no bridge, no IMEP. Prints one JSON line: make_s, episodes_s (all
episodes), env_step_s (time inside env.step alone), steps, and per seed success, steps and action digest (IMEP's
actionDigest of the episode's float32 actions). With --adapter the env is made, reset and stepped through
sim-bridge's MIKASA adapter instead (kwargs obs_mode state, sim_backend cpu, control_mode pd_ee_delta_pos, as the
IMEP protocol and the vla-eval benchmark make it; its method-visible fields fed to the policy, its own end and its
evaluator field `success`): the same env object the other arms step, in this one process; env_step_s is then the
adapter's step (env.step plus building the fields).
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "sim-bridge"))
sys.path.insert(0, str(Path(__file__).resolve().parent / "vla-eval"))

from imep_sim_bridge.adapters import mikasa_runtime as runtime
from imep_sim_bridge.adapters.mikasa import cube_rows, flatten_joints
from imep_sim_bridge.remember_color_policy import RememberColorMemoryPolicy
from imep_vla_eval.side_by_side import action_digest


class InProcessMemory:
    def read(self, bank, ctx, items):  # the proxy's surface
        return items


def make_policy(checkpoint: str | None):
    if checkpoint is None:
        return RememberColorMemoryPolicy(max_batch=1)
    from imep_sim_bridge.checkpoint_policy import CheckpointPolicy

    return CheckpointPolicy(max_batch=1, checkpoint=checkpoint)


def adapter_loop(start: int, n: int, checkpoint: str | None) -> dict:
    import numpy as np

    from imep_sim_bridge.adapters import build_adapters
    from imep_sim_bridge.spec import split

    t0 = time.perf_counter()
    (adapter,) = build_adapters(["mikasa"])
    env = adapter.make("mikasa/RememberColor3-VLA-v0", {"obs_mode": "state", "sim_backend": "cpu", "control_mode": "pd_ee_delta_pos"})
    spec = env.spec()
    make_s = time.perf_counter() - t0
    policy, memory = make_policy(checkpoint), InProcessMemory()
    step_s, steps, success, steps_by_seed, digest = 0.0, 0, {}, {}, {}
    t1 = time.perf_counter()
    for seed in range(start, start + n):
        obs, _ = split(spec, env.reset(seed, {}, None).fields)
        policy.reset(0, str(seed))
        steps_by_seed[seed], actions = 0, []
        while True:
            action = np.array(policy.infer(0, obs, memory)["action"], np.float32)
            actions.append(action)
            s0 = time.perf_counter()
            raw = env.step(action)
            step_s += time.perf_counter() - s0
            steps += 1
            steps_by_seed[seed] += 1
            obs, evaluator = split(spec, raw.fields)
            if raw.done:
                success[seed] = bool(evaluator["success"])
                break
        digest[seed] = action_digest(actions)
    env.close()
    episodes_s = time.perf_counter() - t1
    return {
        "make_s": make_s,
        "episodes_s": episodes_s,
        "env_step_s": step_s,
        "steps": steps,
        "success": success,
        "steps_by_seed": steps_by_seed,
        "digest": digest,
    }


def main(start: int, n: int, checkpoint: str | None = None) -> None:
    runtime.use_venv_vulkan_icd()
    import gymnasium as gym
    import mikasa_robo_suite.vla.memory_envs  # noqa: F401 - imported for its side effect: registers the *-VLA-v0 envs
    import numpy as np
    import torch

    runtime.cpu_torch(torch)
    t0 = time.perf_counter()
    env = gym.make(
        "RememberColor3-VLA-v0",
        num_envs=1,
        **runtime.render_kwargs(
            {
                "obs_mode": "state_dict",
                "control_mode": "pd_ee_delta_pos",
                "sim_backend": "cpu",
                "reward_mode": "normalized_dense",
                "reconfiguration_freq": 1,
                "render_mode": "all",
            }
        ),
    )
    base = env.unwrapped
    make_s = time.perf_counter() - t0
    policy, memory = make_policy(checkpoint), InProcessMemory()
    step_s, steps, success, steps_by_seed, digest = 0.0, 0, {}, {}, {}
    t1 = time.perf_counter()
    for seed in range(start, start + n):
        obs, _ = env.reset(seed=seed)
        policy.reset(0, str(seed))
        steps_by_seed[seed] = 0
        actions = []
        while True:
            view = {"joints": flatten_joints(obs), "cubes": cube_rows([base.cubes[k].pose.p for k in sorted(base.cubes)])}
            action = np.array(policy.infer(0, view, memory)["action"], np.float32)
            actions.append(action)
            s0 = time.perf_counter()
            obs, _, _, truncated, info = env.step(torch.from_numpy(action[None]))
            step_s += time.perf_counter() - s0
            steps += 1
            steps_by_seed[seed] += 1
            if bool(truncated[0]):
                break
        success[seed] = bool(info["success"][0])
        digest[seed] = action_digest(actions)
    print(
        json.dumps(
            {
                "make_s": make_s,
                "episodes_s": time.perf_counter() - t1,
                "env_step_s": step_s,
                "steps": steps,
                "success": success,
                "steps_by_seed": steps_by_seed,
                "digest": digest,
            }
        )
    )


if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if a != "--adapter"]
    if "--adapter" in sys.argv[1:]:
        print(json.dumps(adapter_loop(int(args[0]), int(args[1]), args[2] if len(args) > 2 else None)))
    else:
        main(int(args[0]), int(args[1]), args[2] if len(args) > 2 else None)
