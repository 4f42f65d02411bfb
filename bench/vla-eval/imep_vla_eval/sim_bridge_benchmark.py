"""A vla-eval benchmark (`vla_eval.benchmarks.base.StepBenchmark`) over one of sim-bridge's environments.

What a vla-eval user with a custom task writes: the eval YAML names it by import path
(`imep_vla_eval.sim_bridge_benchmark:SimBridgeBenchmark`) with params `adapter` (a sim-bridge adapter name:
libero, mikasa), `env_id`, `env_kwargs` and `seed_start`. It makes the env once, through the same adapter IMEP's
sim-bridge server uses, so the env, its observation fields, its episode end (`RawStep.done`: success or the env's
own step limit) and its success predicate (the evaluator field `success` of the last step) are the ones IMEP
scores. Episode `episode_idx` (vla-eval's orchestrator numbers a task's episodes 0, 1, …) resets with seed
`seed_start + episode_idx`. The model server sees the method-visible fields only (sim-bridge's `split`), as IMEP's
policy host does. `get_step_result` returns `success`, `seed` (the evaluator field the env reports back, i.e.
the seed that actually reached the env), `steps` (the env's own count) and `action_digest` (IMEP's actionDigest of
the actions stepped, side_by_side.action_digest), which the bench compares across arms.
Each step records reward, done, success and the action through vla-eval's recorder (per-step rows in its SQLite
store when recording is on, its default), as vla-eval's own LIBERO benchmark does.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from vla_eval.benchmarks.base import StepBenchmark, StepResult

from imep_sim_bridge.adapters import build_adapters
from imep_sim_bridge.spec import split

from .side_by_side import action_digest


class SimBridgeBenchmark(StepBenchmark):
    #: what each step records into vla-eval's SQLite store (its default recording, as vla-eval's LIBERO benchmark does)
    _ALL_RECORD_FIELDS = frozenset({"reward", "done", "success", "action"})
    # The adapters choose their own renderer (LIBERO's MUJOCO_GL, MIKASA's Vulkan ICD), as they do under IMEP;
    # the run's `render: cpu` only declares that no GPU is needed.
    render_backends = frozenset({"cpu"})

    @classmethod
    def configure_render(cls, mode: str) -> dict[str, str]:
        return {}

    def __init__(self, adapter: str, env_id: str, seed_start: int, env_kwargs: dict[str, Any] | None = None) -> None:
        super().__init__()
        self.env_id = env_id
        self.seed_start = int(seed_start)
        (self._adapter,) = build_adapters([adapter])
        self._env = self._adapter.make(env_id, dict(env_kwargs or {}))
        self._spec = self._env.spec()
        self._seed = -1
        self._steps = 0
        self._actions: list[np.ndarray] = []

    def get_tasks(self) -> list[dict[str, Any]]:
        return [{"name": self.env_id}]

    def get_metadata(self) -> dict[str, Any]:
        return {"max_steps": self._spec.max_steps}

    def get_metric_keys(self) -> dict[str, str]:
        return {"success": "mean"}

    def reset(self, task: dict[str, Any]) -> Any:
        self._seed = self.seed_start + int(task["episode_idx"])
        self._steps = 0
        self._actions = []
        return self._env.reset(self._seed, {}, None)

    def step(self, action: dict[str, Any]) -> StepResult:
        act = np.asarray(action["actions"])
        raw = self._env.step(act)
        self._steps += 1
        self._actions.append(act)
        _, evaluator = split(self._spec, raw.fields)
        reward, success = float(evaluator.get("reward", 0.0)), bool(evaluator["success"])
        self._recorder.record_step(reward=reward, done=bool(raw.done), success=success, action=act.astype(np.float32))
        return StepResult(obs=raw, reward=reward, done=bool(raw.done), info={})

    def make_obs(self, raw_obs: Any, task: dict[str, Any]) -> dict[str, Any]:
        obs, _ = split(self._spec, raw_obs.fields)
        return obs

    def get_step_result(self, step_result: StepResult) -> dict[str, Any]:
        _, evaluator = split(self._spec, step_result.obs.fields)
        return {
            "success": bool(evaluator["success"]),
            "seed": int(evaluator["seed"]),
            "steps": self._steps,
            "action_digest": action_digest(self._actions),
        }

    def cleanup(self) -> None:
        self._env.close()
