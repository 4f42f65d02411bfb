"""SimplerEnv adapter: Fractal `google_robot_pick_coke_can` and four Bridge (WidowX) tasks.

Written against simpler-env/SimplerEnv @ 4ab7178e and its ManiSkill2_real2sim submodule
(simpler-env/ManiSkill2_real2sim @ ef7a4d4f):

* `simpler_env.make(task_name, **kwargs)` (simpler_env/__init__.py) looks the task up in the
  module-level `ENVIRONMENT_MAP` and then **mutates that shared dict**
  (`env_name, env_kwargs = ENVIRONMENT_MAP[task_name]; env_kwargs["obs_mode"] = ...;
  env_kwargs[key] = value`), so kwargs passed to one make leak into every later make of the same
  task in the process. This adapter snapshots the pristine defaults at import and puts a fresh
  copy back into `ENVIRONMENT_MAP[task]` before every make, and passes a fresh kwargs dict.
* The episode loop follows simpler_env/simple_inference_visual_matching_prepackaged_envs.py:
  `obs, reset_info = env.reset(...)`, `instruction = env.get_language_instruction()`,
  `image = get_image_from_maniskill2_obs_dict(env, obs)` (simpler_env/utils/env/observation_utils.py:
  `obs["image"][camera]["rgb"]`, camera `overhead_camera` for google_robot, `3rd_view_camera` for
  widowx), and `obs, reward, success, truncated, info = env.step(action)` with the 7-d action
  `concat(world_vector, rot_axangle, gripper)`. The episode runs until truncation (the policy may
  end it earlier); the terminated slot *is* success, reported evaluator-only.
* Reset: `env.reset(seed=None, options=None)` (ManiSkill2_real2sim
  mani_skill2_real2sim/envs/custom_scenes/put_on_in_scene.py) draws
  `episode_id = obj_init_options.get("episode_id", self._episode_rng.randint(...))` from the seeded
  episode RNG; `initStateId` maps to `options["obj_init_options"]["episode_id"]` for the Bridge tasks.
  The coke-can task (grasp_single_in_scene.py) has no episode table: its object pose comes from
  `obj_init_options["init_xy"]` or the seeded episode RNG.
* Time limits (register_env): GraspSingleOpenedCokeCanInScene-v0 80, PutSpoonOnTableClothInScene-v0 /
  PutCarrotOnPlateInScene-v0 / StackGreenCubeOnYellowCubeBakedTexInScene-v0 60,
  PutEggplantInBasketScene-v0 120. Camera sizes: overhead_camera 640×512, 3rd_view_camera 640×480
  (agents/configs/*/defaults.py).
* Action bounds: `PDEEPoseController._initialize_action_space` (agents/controllers/pd_ee_pose.py) with
  the arm configs of agents/configs/{widowx,google_robot}/defaults.py (position ±1, `rot_bound` π/2,
  `normalize_action=False`) and the normalized gripper give Box([-1]*3 + [-π/2]*3 + [-1],
  [1]*3 + [π/2]*3 + [1]). The spec's `low` / `high` are scalars, reported only when every dimension
  agrees (`uniform_bounds`), so both are omitted here rather than widened to [-π/2, π/2].
* Seeds: `env.reset(seed=…)` seeds `np.random.RandomState`, so seeds above 2^32 − 1 are refused.
"""

from __future__ import annotations

import copy
import random
import weakref
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ..errors import AdapterError
from ..spec import ActionSpec, EnvSpec, FieldSpec, RawStep
from .base import Adapter, Env, check_sim_seed, import_or_unavailable, missing_module, to_numpy, uniform_bounds

ADAPTER = "simplerenv"
PREFIX = "simpler/"
TASKS: dict[str, dict[str, Any]] = {
    "google_robot_pick_coke_can": {"max_steps": 80, "image": (512, 640, 3), "episode_table": False},
    "widowx_spoon_on_towel": {"max_steps": 60, "image": (480, 640, 3), "episode_table": True},
    "widowx_carrot_on_plate": {"max_steps": 60, "image": (480, 640, 3), "episode_table": True},
    "widowx_stack_cube": {"max_steps": 60, "image": (480, 640, 3), "episode_table": True},
    "widowx_put_eggplant_in_basket": {"max_steps": 120, "image": (480, 640, 3), "episode_table": True},
}
INSTALL_HINT = (
    "git clone https://github.com/simpler-env/SimplerEnv --recurse-submodules; "
    "pip install -e SimplerEnv/ManiSkill2_real2sim; pip install -e SimplerEnv"
)


def _plain(value: Any) -> Any:
    """info values → msgpack-friendly python values (nested maps kept)."""
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (str, bool, int, float)) or value is None:
        return value
    arr = to_numpy(value)
    if arr.ndim == 0:
        return arr.item()
    return arr


class SimplerEnv(Env):
    def __init__(self, env_id: str, env: Any, get_image: Any) -> None:
        self._id = env_id
        self._task = env_id[len(PREFIX) :]
        self._meta = TASKS[self._task]
        self._env = env
        self._get_image = get_image
        self._seed = 0
        self._instruction = ""
        self._spec = self._build_spec()

    def _build_spec(self) -> EnvSpec:
        act = self._env.action_space
        shape = tuple(int(d) for d in getattr(act, "shape", (7,)) or (7,))
        low, high = uniform_bounds(act)  # the real Box is [-1,1]^3 × [-π/2,π/2]^3 × [-1,1]: both omitted
        max_steps = getattr(getattr(self._env, "spec", None), "max_episode_steps", None) or self._meta["max_steps"]
        observation = {
            "image": FieldSpec(self._meta["image"], "uint8"),
            "instruction": FieldSpec((), "string"),
            "reward": FieldSpec((), "float64"),
            "success": FieldSpec((), "bool"),
            "truncated": FieldSpec((), "bool"),
            "episode_id": FieldSpec((), "int64"),
            "episode_stats": FieldSpec((), "map"),
            "seed": FieldSpec((), "int64"),
            "task": FieldSpec((), "string"),
        }
        return EnvSpec(
            id=self._id,
            max_steps=int(max_steps),
            action=ActionSpec(shape=shape, dtype="float32", low=low, high=high),
            observation=observation,
            method_visible=("image", "instruction"),
            evaluator_only=("reward", "success", "truncated", "episode_id", "episode_stats", "seed", "task"),
            first_frame_field="image",
        )

    def spec(self) -> EnvSpec:
        return self._spec

    def _fields(self, obs: Any, info: Mapping[str, Any], *, reward: Any, success: Any, truncated: Any) -> dict[str, Any]:
        image = np.ascontiguousarray(to_numpy(self._get_image(self._env, obs)), dtype=np.uint8)
        fields: dict[str, Any] = {
            "image": image,
            "instruction": self._instruction,
            "reward": float(to_numpy(reward).reshape(())),
            "success": bool(to_numpy(success).reshape(())),
            "truncated": bool(to_numpy(truncated).reshape(())),
            "seed": self._seed,
            "task": self._task,
        }
        if "episode_id" in info:
            fields["episode_id"] = int(to_numpy(info["episode_id"]).reshape(()))
        if "episode_stats" in info:
            fields["episode_stats"] = _plain(info["episode_stats"])
        return fields

    def reset(self, seed: int, options: Mapping[str, Any], init_state_id: int | None) -> RawStep:
        check_sim_seed(self._id, "seed", seed, "ManiSkill2_real2sim's env.reset(seed=…) (np.random.RandomState)")
        opts = copy.deepcopy(dict(options))
        if init_state_id is not None:
            if not self._meta["episode_table"]:
                raise AdapterError(f"{self._id}: initStateId is not supported (no episode table); pass options.obj_init_options.init_xy instead")
            obj = dict(opts.get("obj_init_options") or {})
            obj["episode_id"] = int(init_state_id)
            opts["obj_init_options"] = obj
        random.seed(seed)
        np.random.seed(seed)
        obs, info = self._env.reset(seed=seed, options=opts)
        self._seed = seed
        self._instruction = str(self._env.get_language_instruction())
        fields = self._fields(obs, info, reward=0.0, success=False, truncated=False)
        return RawStep(fields=fields, done=False)

    def step(self, action: np.ndarray) -> RawStep:
        obs, reward, success, truncated, info = self._env.step(np.array(action, dtype=np.float32))  # writable copy
        # long-horizon tasks may change the instruction; none of the five here do, but stay exact
        self._instruction = str(self._env.get_language_instruction())
        fields = self._fields(obs, info, reward=reward, success=success, truncated=truncated)
        return RawStep(fields=fields, done=fields["truncated"])

    def close(self) -> None:
        self._env.close()


#: ENVIRONMENT_MAP as first seen in this process, per simpler_env module object (shared by every
#: adapter instance, so a second adapter cannot snapshot an already-mutated map).
_PRISTINE: weakref.WeakKeyDictionary[Any, dict[str, tuple[str, dict[str, Any]]]] = weakref.WeakKeyDictionary()


def _pristine_map(simpler_env: Any) -> dict[str, tuple[str, dict[str, Any]]]:
    if simpler_env not in _PRISTINE:
        _PRISTINE[simpler_env] = {k: (v[0], copy.deepcopy(v[1])) for k, v in simpler_env.ENVIRONMENT_MAP.items()}
    return _PRISTINE[simpler_env]


class SimplerEnvAdapter(Adapter):
    name = ADAPTER

    def env_ids(self) -> Sequence[str]:
        return [PREFIX + t for t in TASKS]

    def unavailable(self) -> str | None:
        missing = missing_module(["simpler_env", "mani_skill2_real2sim"])
        return None if missing is None else f"python module '{missing}' is not installed ({INSTALL_HINT})"

    def make(self, env_id: str, kwargs: Mapping[str, Any]) -> Env:
        simpler_env = import_or_unavailable(ADAPTER, "simpler_env", "simpler_env", INSTALL_HINT)
        obs_utils = import_or_unavailable(ADAPTER, "simpler_env.utils.env.observation_utils", "simpler_env", INSTALL_HINT)
        task = env_id[len(PREFIX) :]
        pristine = _pristine_map(simpler_env)
        if task not in pristine:
            raise AdapterError(f"{env_id}: this simpler_env has no task '{task}'")
        name, defaults = pristine[task]
        simpler_env.ENVIRONMENT_MAP[task] = (name, copy.deepcopy(defaults))  # undo earlier makes' mutation
        fresh_kwargs = copy.deepcopy(dict(kwargs))
        env = simpler_env.make(task, **fresh_kwargs)
        return SimplerEnv(env_id, env, obs_utils.get_image_from_maniskill2_obs_dict)
