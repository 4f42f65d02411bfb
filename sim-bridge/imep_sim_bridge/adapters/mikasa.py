"""MIKASA-Robo adapter: ShellGameTouch-v0 and RememberColor3/5/9-v0 (ManiSkill 3).

Written against CognitiveAISystems/MIKASA-Robo @ 2350fa67 (requirements.txt pins
mani_skill==3.0.0b15, gymnasium==0.29.1, torch==2.2.1):

* Creation — `gym.make(env_id, num_envs=…, obs_mode="rgb", control_mode="pd_joint_delta_pos",
  render_mode="all", sim_backend="gpu", reward_mode=…)` exactly as `env_kwargs` in
  baselines/ppo/ppo_memtasks.py and mikasa_robo_suite/dataset_collectors/get_mikasa_robo_datasets.py;
  evaluation envs there use `reconfiguration_freq=1` (`eval_reconfiguration_freq`), and
  `ManiSkillVectorEnv(..., ignore_terminations=True)`: an evaluation episode runs to the time limit.
  Importing `mikasa_robo_suite` registers the envs (mikasa_robo_suite/__init__.py imports
  memory_envs); `StateOnlyTensorToDictWrapper` (mikasa_robo_suite/utils/wrappers.py) is applied
  first, as README.md says ("always use this wrapper!").
* Time limits — `@register_env("ShellGameTouch-v0", max_episode_steps=90)`
  (memory_envs/shell_game_touch.py) and `max_episode_steps=60` for RememberColor3/5/9-v0
  (memory_envs/remember_color.py).
* Randomness — the hidden facts are drawn with `self._batched_episode_rng` (cup:
  shell_game_touch.py `_initialize_episode`, `self.cup_with_ball_number =
  self._batched_episode_rng.choice([0, 1, 2])`; colour: remember_color.py
  `self.true_color_indices = self._batched_episode_rng.choice(...)`), but the layout uses the
  *global* torch RNG: shell_game_touch.py `xyz[:, :2] = torch.rand((b, 2)) * 0.2 - 0.1` (cup
  positions) and remember_color.py `torch.randn(2, ...)` (cube jitter) and
  `shuffled_indices = torch.randperm(len(positions))` (the cube position shuffle). ManiSkill's
  `BaseEnv.reset` (haosulab/ManiSkill mani_skill/envs/sapien_env.py @ 3958362e) wraps
  `_initialize_episode` in `torch.random.fork_rng(); torch.manual_seed(self._episode_seed[0])`, but
  only when a seed is passed (or enhanced determinism is on); the pinned 3.0.0b15 was not checked.
  So this adapter always passes the seed to `env.reset(seed=…)` and, as defence in depth, seeds
  `random`, numpy's global RNG **and** torch's global RNG with the episode seed before every reset
  (anything drawn outside that fork — or in a ManiSkill without it — is then reproducible too).
  ManiSkill seeds `np.random.RandomState(seed)`, so seeds above 2^32 − 1 are refused, never wrapped.
* Oracle — `self.oracle_info = self.cup_with_ball_number` / `self.true_color_indices`, which
  `StateOnlyTensorToDictWrapper.observation` copies *into the observation* (`obs['oracle_info']`,
  also `obs['prompt']`). This adapter reads the oracle from `env.unwrapped` and emits it only as an
  evaluator-only field; the observation's `oracle_info`/`prompt` are never forwarded.
* Observation — obs_mode="rgb" gives `obs['sensor_data'][cam]['rgb']` (uint8, (1, 128, 128, 3);
  cameras `base_camera` from `_default_sensor_configs` and `hand_camera` of `panda_wristcam`),
  `obs['agent']` (qpos, qvel) and `obs['extra']` (tcp_pose). `joints` is flattened as
  `FlattenRGBDObservationWrapper(joints=True)` in ppo_memtasks.py does: extra then agent.
* Step — `env.step(torch.from_numpy(action))` as in README.md; it returns batched torch tensors
  `obs, reward, terminated, truncated, info` with `info['success']`, `info['elapsed_steps']`.
"""

from __future__ import annotations

import random
from typing import Any, Mapping, Sequence

import numpy as np

from ..errors import AdapterError
from ..spec import ActionSpec, EnvSpec, FieldSpec, RawStep
from .base import Adapter, Env, check_sim_seed, import_or_unavailable, missing_module, scalar, unbatch, uniform_bounds

ADAPTER = "mikasa"
PREFIX = "mikasa/"
TASKS: dict[str, dict[str, Any]] = {
    "ShellGameTouch-v0": {"max_steps": 90, "oracle_attr": "cup_with_ball_number", "oracle_field": "oracle_cup"},
    "RememberColor3-v0": {"max_steps": 60, "oracle_attr": "true_color_indices", "oracle_field": "oracle_color"},
    "RememberColor5-v0": {"max_steps": 60, "oracle_attr": "true_color_indices", "oracle_field": "oracle_color"},
    "RememberColor9-v0": {"max_steps": 60, "oracle_attr": "true_color_indices", "oracle_field": "oracle_color"},
}
#: baselines/ppo/ppo_memtasks.py `env_kwargs` (rgb modes) + the eval env's reconfiguration_freq=1.
DEFAULT_MAKE_KWARGS: dict[str, Any] = {
    "obs_mode": "rgb",
    "control_mode": "pd_joint_delta_pos",
    "render_mode": "all",
    "sim_backend": "gpu",
    "reward_mode": "normalized_dense",
    "reconfiguration_freq": 1,
}
#: kwargs this adapter consumes itself (not passed to gym.make).
ADAPTER_KWARGS = ("ignore_terminations",)

REQUIREMENTS = (
    ("torch", "torch", "pip install torch==2.2.1 (MIKASA-Robo requirements.txt)"),
    ("gymnasium", "gymnasium", "pip install gymnasium==0.29.1"),
    ("mani_skill", "mani_skill", "pip install mani_skill==3.0.0b15"),
    ("mikasa_robo_suite", "mikasa-robo-suite", "pip install mikasa-robo-suite"),
)


def _sub(space: Any, *keys: str) -> Any:
    for k in keys:
        if space is None:
            return None
        try:
            space = space[k]
        except (KeyError, TypeError, IndexError):
            return None
    return space


def _shape(space: Any, default: tuple[int, ...]) -> tuple[int, ...]:
    shape = getattr(space, "shape", None)
    return tuple(int(d) for d in shape) if shape is not None else default


def _flat_len(space: Any) -> int:
    """Total element count of a (nested) dict space, batch dimension included if present."""
    if space is None:
        return 0
    if hasattr(space, "shape") and getattr(space, "shape") is not None and not hasattr(space, "keys"):
        return int(np.prod(space.shape))
    total = 0
    for k in space.keys():
        total += _flat_len(space[k])
    return total


# Keys of obs["extra"] that `joints` carries: the robot's own state only. MIKASA adds the task's answer to
# `extra` in its state observation modes (oracle_info, ball_pose, obj_pose, …); the adapter accepts rgb modes
# only, where extra is tcp_pose alone, and any other key is refused rather than flattened into a visible field.
EXTRA_JOINTS = ("tcp_pose",)


def check_extra_keys(keys: Any, where: str) -> None:
    """AdapterError naming the first key of obs["extra"] that `joints` does not carry (EXTRA_JOINTS)."""
    for key in keys:
        if key not in EXTRA_JOINTS:
            raise AdapterError(
                f"{where}: obs['extra'] holds {key!r}, which the visible joints field does not carry "
                f"(only {', '.join(EXTRA_JOINTS)}): it may hold the task's answer; use an rgb obs_mode"
            )


def flatten_joints(obs: Mapping[str, Any]) -> np.ndarray:
    """extra (tcp_pose…) then agent (qpos, qvel), flattened per env, as float32 (unbatched)."""
    if isinstance(obs.get("extra"), Mapping):
        check_extra_keys(obs["extra"].keys(), "joints")
    parts: list[np.ndarray] = []

    def walk(node: Any) -> None:
        if isinstance(node, Mapping):
            for key in node:
                walk(node[key])
        else:
            parts.append(unbatch(node).astype(np.float32).reshape(-1))

    for key in ("extra", "agent"):
        if key in obs:
            walk(obs[key])
    return np.concatenate(parts) if parts else np.zeros((0,), np.float32)


def translate(
    obs: Mapping[str, Any],
    *,
    oracle: int,
    oracle_field: str,
    task: str,
    seed: int,
    reward: Any = 0.0,
    terminated: Any = False,
    truncated: Any = False,
    info: Mapping[str, Any] | None = None,
    success_once: bool = False,
) -> dict[str, Any]:
    """All fields of one MIKASA step (the server splits them by the spec)."""
    info = info or {}
    sensor = obs["sensor_data"]
    fields: dict[str, Any] = {
        "image": np.ascontiguousarray(unbatch(sensor["base_camera"]["rgb"]), dtype=np.uint8),
        "joints": flatten_joints(obs),
    }
    if "hand_camera" in sensor:
        fields["wrist_image"] = np.ascontiguousarray(unbatch(sensor["hand_camera"]["rgb"]), dtype=np.uint8)
    success = bool(scalar(info["success"])) if "success" in info else False
    fields.update(
        {
            "reward": float(scalar(reward)),
            "success": success,
            "success_once": bool(success_once or success),
            "terminated": bool(scalar(terminated)),
            "truncated": bool(scalar(truncated)),
            "elapsed_steps": int(scalar(info["elapsed_steps"])) if "elapsed_steps" in info else 0,
            "oracle_info": int(oracle),
            oracle_field: int(oracle),
            "seed": int(seed),
            "task": task,
        }
    )
    return fields


class MikasaEnv(Env):
    def __init__(self, env_id: str, env: Any, torch: Any, *, ignore_terminations: bool) -> None:
        self._id = env_id
        self._task = env_id[len(PREFIX) :]
        self._meta = TASKS[self._task]
        self._env = env
        self._torch = torch
        self._ignore_terminations = ignore_terminations
        self._seed = 0
        self._success_once = False
        self._spec = self._build_spec()

    def _build_spec(self) -> EnvSpec:
        base = self._env.unwrapped
        act = getattr(base, "single_action_space", None) or self._env.action_space
        act_shape = _shape(act, (8,))
        low, high = uniform_bounds(act)
        obs_space = getattr(base, "single_observation_space", None)
        image = _shape(_sub(obs_space, "sensor_data", "base_camera", "rgb"), (128, 128, 3))
        wrist_space = _sub(obs_space, "sensor_data", "hand_camera", "rgb")
        extra_space = _sub(obs_space, "extra")
        if extra_space is not None and hasattr(extra_space, "keys"):
            check_extra_keys(extra_space.keys(), self._id)
        joints = _flat_len(extra_space) + _flat_len(_sub(obs_space, "agent"))
        observation = {
            "image": FieldSpec(image, "uint8"),
            "joints": FieldSpec((joints or 25,), "float32"),
            "reward": FieldSpec((), "float32"),
            "success": FieldSpec((), "bool"),
            "success_once": FieldSpec((), "bool"),
            "terminated": FieldSpec((), "bool"),
            "truncated": FieldSpec((), "bool"),
            "elapsed_steps": FieldSpec((), "int64"),
            "oracle_info": FieldSpec((), "int64"),
            self._meta["oracle_field"]: FieldSpec((), "int64"),
            "seed": FieldSpec((), "int64"),
            "task": FieldSpec((), "string"),
        }
        visible = ["image", "joints"]
        if wrist_space is not None:
            observation["wrist_image"] = FieldSpec(_shape(wrist_space, (128, 128, 3)), "uint8")
            visible.append("wrist_image")
        evaluator = [k for k in observation if k not in visible]
        return EnvSpec(
            id=self._id,
            max_steps=self._meta["max_steps"],
            action=ActionSpec(shape=act_shape, dtype="float32", low=low, high=high),
            observation=observation,
            method_visible=tuple(visible),
            evaluator_only=tuple(evaluator),
            first_frame_field="image",
        )

    def spec(self) -> EnvSpec:
        return self._spec

    def _oracle(self) -> int:
        base = self._env.unwrapped
        value = getattr(base, self._meta["oracle_attr"], None)
        if value is None:
            value = getattr(base, "oracle_info", None)
        if value is None:
            raise AdapterError(f"{self._id}: the env exposes neither {self._meta['oracle_attr']} nor oracle_info")
        return int(scalar(value))

    def seed_global_rngs(self, seed: int) -> None:
        """Python, numpy and torch global RNGs ← seed (torch draws the cup/cube layout)."""
        random.seed(seed)
        np.random.seed(seed)
        self._torch.manual_seed(seed)

    def reset(self, seed: int, options: Mapping[str, Any], init_state_id: int | None) -> RawStep:
        if init_state_id is not None:
            raise AdapterError(f"{self._id}: MIKASA-Robo has no init-state table; the seed selects the episode")
        check_sim_seed(self._id, "seed", seed, "ManiSkill's env.reset(seed=…) (np.random.RandomState)")
        self.seed_global_rngs(seed)
        obs, info = self._env.reset(seed=seed, options=dict(options))
        self._seed = seed
        self._success_once = False
        fields = translate(
            obs, oracle=self._oracle(), oracle_field=self._meta["oracle_field"], task=self._task, seed=seed, info=info
        )
        # No action taken yet: a reset never reports success. (Not MIKASA's own gate: `info['success'] *=
        # info['elapsed_steps'] >= 5` exists only in ShellGameTouch's compute_dense_reward, i.e. its
        # (normalized_)dense reward modes on step; RememberColor and the sparse mode report evaluate()'s
        # is_obj_placed & is_robot_static as is.)
        fields["success"] = False
        fields["success_once"] = False
        return RawStep(fields=fields, done=False)

    def step(self, action: np.ndarray) -> RawStep:
        batched = np.array(action, dtype=np.float32)[None]  # writable copy; num_envs = 1
        obs, reward, terminated, truncated, info = self._env.step(self._torch.from_numpy(batched))
        fields = translate(
            obs,
            oracle=self._oracle(),
            oracle_field=self._meta["oracle_field"],
            task=self._task,
            seed=self._seed,
            reward=reward,
            terminated=terminated,
            truncated=truncated,
            info=info,
            success_once=self._success_once,
        )
        self._success_once = fields["success_once"]
        elapsed = fields["elapsed_steps"]
        done = fields["truncated"] or elapsed >= self._spec.max_steps
        if not self._ignore_terminations:
            done = done or fields["terminated"]
        return RawStep(fields=fields, done=bool(done))

    def close(self) -> None:
        self._env.close()


class MikasaAdapter(Adapter):
    name = ADAPTER

    def env_ids(self) -> Sequence[str]:
        return [PREFIX + t for t in TASKS]

    def unavailable(self) -> str | None:
        missing = missing_module([m for m, _, _ in REQUIREMENTS])
        if missing is None:
            return None
        hint = next(h for m, _, h in REQUIREMENTS if m == missing)
        return f"python module '{missing}' is not installed ({hint})"

    def _import(self) -> tuple[Any, Any, Any]:
        mods = {m: import_or_unavailable(ADAPTER, m, pkg, hint) for m, pkg, hint in REQUIREMENTS}
        wrappers = import_or_unavailable(
            ADAPTER, "mikasa_robo_suite.utils.wrappers", "mikasa-robo-suite", "pip install mikasa-robo-suite"
        )
        return mods["torch"], mods["gymnasium"], wrappers

    def make(self, env_id: str, kwargs: Mapping[str, Any]) -> Env:
        torch, gym, wrappers = self._import()
        task = env_id[len(PREFIX) :]
        make_kwargs = dict(DEFAULT_MAKE_KWARGS)
        user = {k: v for k, v in kwargs.items() if k not in ADAPTER_KWARGS}
        if "num_envs" in user and user["num_envs"] != 1:
            raise AdapterError(f"{env_id}: the bridge hosts one env per handle (num_envs must be 1)")
        user.pop("num_envs", None)
        make_kwargs.update(user)
        if "rgb" not in str(make_kwargs["obs_mode"]):
            raise AdapterError(f"{env_id}: obs_mode must include rgb (got {make_kwargs['obs_mode']!r})")
        env = gym.make(task, num_envs=1, **make_kwargs)
        env = wrappers.StateOnlyTensorToDictWrapper(env)
        return MikasaEnv(env_id, env, torch, ignore_terminations=bool(kwargs.get("ignore_terminations", True)))
