"""MIKASA-Robo adapter (ManiSkill 3): the tasks of adapters/mikasa_tasks.py — RememberColor{3,5,9}-VLA-v0 / -v0,
ShellGameTouch/Push/Pick-v0, Intercept{Slow,Medium,Fast}-VLA-v0, … — each with its fact, decision step and state fields.

Checked against the real stack (mikasa-robo-suite 1.0.0, mani_skill 3.0.0b15, sapien 3.0.3, torch 2.13.0 CPU;
scripts/sims/mikasa.sh), run on PhysX CPU with Mesa 25 lavapipe rendering (adapters/mikasa_runtime.py):

* Registration — `import mikasa_robo_suite` registers nothing in 1.0.0 (its __init__ is lazy); the envs are
  registered by `mikasa_robo_suite.rl.memory_envs` (the original tasks, `*-v0`) and
  `mikasa_robo_suite.vla.memory_envs` (`*-VLA-v0`). Time limits are read from ManiSkill's registry
  (`REGISTERED_ENVS[task].max_episode_steps`: 60 for RememberColor*-v0, 25 for RememberColor3-VLA-v0, 90 for
  ShellGame*-v0), never assumed.
* Creation — `gym.make(task, num_envs=1, obs_mode=…, control_mode="pd_joint_delta_pos", render_mode="all",
  sim_backend=…, reward_mode="normalized_dense", reconfiguration_freq=1)` as MIKASA's baselines do; ManiSkill
  3.0.0b15 names its CPU backend `sim_backend="cpu"` (not "physx_cpu"). MIKASA's StateOnlyTensorToDictWrapper
  is not applied: it only copies `task_cue` and `oracle_info` into the observation, and the adapter builds its
  fields itself (the oracle is read from `env.unwrapped`, evaluator-only).
* Legacy RememberColor*-v0 cannot be solved in this release: its `evaluate()` lifts every cube to z = 1000 while
  the cue is hidden and restores them to `original_poses` (the lifted poses; the line restoring
  `initial_poses` is commented out), so from step 10 on all cubes fall from ~1000 m (measured: z 999.9 → 963
  over steps 10–60 on PhysX CPU). The VLA variants put the candidates back (`appeared_mask`) — use those.
* Observation, rgb modes — `image` (base_camera rgb, uint8 128×128×3), `wrist_image` (hand_camera), `joints`
  = extra.tcp_pose (7) + agent.qpos (9) + agent.qvel (9) as float32 (FlattenRGBDObservationWrapper's order),
  and the base camera's calibration `camera_intrinsic` (K, 3×3) and `camera_extrinsic` (world→camera [R|t], 3×4)
  from `sensor_param` — fixed per camera, nothing about the task.
* Observation, state modes (tasks with state fields in mikasa_tasks.py) — ManiSkill's state_dict `extra` holds the answer
  (`oracle_info`, and `goal_k_pose` = the target cube's position, zero for the others), so none of it is
  passed: `joints` takes tcp_pose only, and `cubes` [C, 4] float32 is what a camera would show of the cubes —
  row k = colour k's position (x, y, z) and 1 when it is on the table, all zeros while MIKASA hides it (it lifts
  hidden cubes to z = 1000). During the cue phase exactly one row is visible (the colour to remember); in the
  empty phase none; then all of them. It never says which candidate is the target.
  Intercept*-VLA: `ball` and `goal` (positions, float32[3]); the ball's velocity (`oracle_info`,
  `ball_linear_vel` in ManiSkill's state) is never shown — the evaluator gets it as `oracle_velocity`.
* Randomness — the fact (`true_color_indices` / `cup_with_ball_number`) is drawn from
  `_batched_episode_rng`, the layout and the phase lengths from torch; ManiSkill's `reset(seed=…)` runs
  `_initialize_episode` inside `torch.random.fork_rng()` with `torch.manual_seed(episode_seed)`, so one seed
  is one episode. The adapter also seeds random/numpy/torch's global RNGs (defence in depth). ManiSkill seeds
  `np.random.RandomState(seed)`: seeds above 2^32 − 1 are refused.
* Facts — discrete ones only: `oracle_color` (domain 0 … C−1) / `oracle_cup` (0, 1, 2), evaluator-only (also
  as `oracle_info`); a task with a continuous fact (Intercept's velocity) declares none and S/T are refused on
  it. Decision steps per task in mikasa_tasks.py, read from the env instance where the env has a constant.
* Step — `env.step(torch.from_numpy(action[None]))`; `info['success']`, `info['elapsed_steps']`. A row's
  `success` is the last step's (success_at_end); `success_once` is passed to the evaluator too. Make kwarg
  `success: once` makes a row's `success` the episode's success_once instead — the metric MIKASA-Robo-VLA's own
  harness reports (vla/benchmarking.py `run_episode`: `success_once = success_once or info["success"]`).
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ..conventions import IMAGE, WRIST_IMAGE, mikasa_conventions
from ..errors import AdapterError
from ..spec import ActionSpec, Component, EnvSpec, FactSpec, FieldSpec, RawStep
from . import mikasa_runtime as runtime
from .base import Adapter, Env, check_sim_seed, import_or_unavailable, missing_module, scalar, unbatch, uniform_bounds
from .mikasa_tasks import TASKS, Task, cube_rows  # noqa: F401 - cube_rows re-exported (tests, bench)
from .render_request import RenderRequest, sim_options

ADAPTER = "mikasa"
PREFIX = "mikasa/"
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
ADAPTER_KWARGS = ("ignore_terminations", "lamp_bulb", "frames", "success")
#: make kwarg `success`: a row's success is the last step's (`end`, the default) or any step's (`once`)
SUCCESS_MODES = ("end", "once")
STATE_MODES = ("state", "state_dict")

REQUIREMENTS = (
    ("torch", "torch", f"{runtime.SETUP_HINT} (torch==2.13.0)"),
    ("gymnasium", "gymnasium", f"{runtime.SETUP_HINT} (gymnasium==0.29.1)"),
    ("mani_skill", "mani_skill", f"{runtime.SETUP_HINT} (mani_skill==3.0.0b15)"),
    ("mikasa_robo_suite", "mikasa-robo-suite", f"{runtime.SETUP_HINT} (mikasa-robo-suite==1.0.0)"),
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


# Keys of obs["extra"] that `joints` carries: the robot's own state only. MIKASA adds the task's answer to
# `extra` in its state observation modes (oracle_info, goal_k_pose, …): those are never copied.
EXTRA_JOINTS = ("tcp_pose",)
AGENT_JOINTS = ("qpos", "qvel")


def flatten_joints(obs: Mapping[str, Any]) -> np.ndarray:
    """extra.tcp_pose then agent.qpos, agent.qvel, flattened per env, as float32 (unbatched)."""
    parts: list[np.ndarray] = []
    for group, keys in (("extra", EXTRA_JOINTS), ("agent", AGENT_JOINTS)):
        node = obs.get(group)
        if not isinstance(node, Mapping):
            raise AdapterError(f"joints: the observation has no obs[{group!r}] map")
        for key in keys:
            if key not in node:
                raise AdapterError(f"joints: obs[{group!r}] has no {key!r}")
            parts.append(unbatch(node[key]).astype(np.float32).reshape(-1))
    return np.concatenate(parts)


def translate(
    obs: Mapping[str, Any],
    *,
    oracle: int | str | None,
    oracle_field: str | None,
    task: str,
    seed: int,
    state: Mapping[str, np.ndarray] | None = None,
    evaluator: Mapping[str, np.ndarray] | None = None,
    reward: Any = 0.0,
    terminated: Any = False,
    truncated: Any = False,
    info: Mapping[str, Any] | None = None,
    success_once: bool = False,
) -> dict[str, Any]:
    """All fields of one MIKASA step (the server splits them by the spec)."""
    info = info or {}
    fields: dict[str, Any] = {"joints": flatten_joints(obs)}
    sensor = obs.get("sensor_data")
    if isinstance(sensor, Mapping) and "base_camera" in sensor and "rgb" in sensor["base_camera"]:
        fields["image"] = np.ascontiguousarray(unbatch(sensor["base_camera"]["rgb"]), dtype=np.uint8)
        if "hand_camera" in sensor:
            fields["wrist_image"] = np.ascontiguousarray(unbatch(sensor["hand_camera"]["rgb"]), dtype=np.uint8)
        params = _sub(obs, "sensor_param", "base_camera")
        if params is not None and "intrinsic_cv" in params and "extrinsic_cv" in params:
            fields["camera_intrinsic"] = unbatch(params["intrinsic_cv"]).astype(np.float32).reshape(3, 3)
            fields["camera_extrinsic"] = unbatch(params["extrinsic_cv"]).astype(np.float32).reshape(3, 4)
    fields.update(state or {})
    fields.update(evaluator or {})
    success = bool(scalar(info["success"])) if "success" in info else False
    fields.update(
        {
            "reward": float(scalar(reward)),
            "success": success,
            "success_once": bool(success_once or success),
            "terminated": bool(scalar(terminated)),
            "truncated": bool(scalar(truncated)),
            "elapsed_steps": int(scalar(info["elapsed_steps"])) if "elapsed_steps" in info else 0,
            "seed": int(seed),
            "task": task,
        }
    )
    if oracle is not None and oracle_field is not None:
        fields["oracle_info"] = oracle
        fields[oracle_field] = oracle
    return fields


class MikasaEnv(Env):
    def __init__(
        self,
        env_id: str,
        env: Any,
        torch: Any,
        *,
        max_steps: int,
        state: bool,
        ignore_terminations: bool,
        control_mode: str | None = None,
        frames: bool = False,
        success: str = "end",
    ) -> None:
        self._id = env_id
        #: the ManiSkill control mode the env was made with (its action conventions follow from it)
        self._control_mode = control_mode
        self._task = env_id[len(PREFIX) :]
        self._meta: Task = TASKS[self._task]
        self._env = env
        self._torch = torch
        self._state = state
        self._max_steps = max_steps
        self._ignore_terminations = ignore_terminations
        #: state modes: render the base camera each step into the evaluator-only `frame` (for filmstrips)
        self._frames = frames and state
        #: the steps this episode's reset asked the render for (reset option `frame`, render_request.py)
        self._render = RenderRequest()
        #: elapsed steps in this episode (0 after the reset)
        self._t = 0
        self._seed = 0
        self._success_once = False
        self._success_mode = success
        self._spec = self._build_spec()

    def _build_spec(self) -> EnvSpec:
        base = self._env.unwrapped
        act = getattr(base, "single_action_space", None) or self._env.action_space
        low, high = uniform_bounds(act)
        obs_space = getattr(base, "single_observation_space", None)
        joints = sum(int(np.prod(_shape(_sub(obs_space, g, k), (0,)))) for g, ks in (("extra", EXTRA_JOINTS), ("agent", AGENT_JOINTS)) for k in ks)
        observation: dict[str, FieldSpec] = {"joints": FieldSpec((joints,), "float32")}
        visible = ["joints"]
        if self._state:
            for f in self._meta.state:
                observation[f.name] = f.spec(base)
                visible.append(f.name)
        else:
            observation["image"] = FieldSpec(_shape(_sub(obs_space, "sensor_data", "base_camera", "rgb"), (128, 128, 3)), "uint8")
            visible.insert(0, "image")
            wrist = _sub(obs_space, "sensor_data", "hand_camera", "rgb")
            if wrist is not None:
                observation["wrist_image"] = FieldSpec(_shape(wrist, (128, 128, 3)), "uint8")
                visible.append("wrist_image")
            if _sub(obs_space, "sensor_param", "base_camera", "intrinsic_cv") is not None:
                # the base camera's calibration (OpenCV K and world→camera [R|t]): what a user calibrates, not the task
                observation["camera_intrinsic"] = FieldSpec((3, 3), "float32")
                observation["camera_extrinsic"] = FieldSpec((3, 4), "float32")
                visible += ["camera_intrinsic", "camera_extrinsic"]
        fact = self._meta.fact
        facts = {} if fact is None else {"oracle_info": FieldSpec((), fact.dtype(base)), fact.field: FieldSpec((), fact.dtype(base))}
        observation.update(
            {
                "reward": FieldSpec((), "float32"),
                "success": FieldSpec((), "bool"),
                "success_once": FieldSpec((), "bool"),
                "terminated": FieldSpec((), "bool"),
                "truncated": FieldSpec((), "bool"),
                "elapsed_steps": FieldSpec((), "int64"),
                **facts,
                "seed": FieldSpec((), "int64"),
                "task": FieldSpec((), "string"),
                **{f.name: f.spec(base) for f in self._meta.oracle},
            }
        )
        if self._frames:
            observation["frame"] = FieldSpec(runtime.base_camera_shape(base), "uint8")
        action_shape = _shape(act, (8,))
        return EnvSpec(
            id=self._id,
            max_steps=self._max_steps,
            action=ActionSpec(shape=action_shape, dtype="float32", low=low, high=high),
            observation=observation,
            method_visible=tuple(visible),
            evaluator_only=tuple(k for k in observation if k not in visible),
            first_frame_field=None if self._state else "image",
            fact=None if fact is None else FactSpec(fact.field, fact.domain(base)),
            decision_from_step=min(self._meta.decision(base), self._max_steps),
            conventions=mikasa_conventions(
                getattr(base, "control_mode", None) or self._control_mode,
                int(np.prod(action_shape)),
                self._observation_conventions(visible, joints),
            ),
        )

    def _observation_conventions(self, visible: list[str], joints: int) -> tuple[Component, ...]:
        """What the env shows the policy, in vla-eval's vocabulary (the fields in `visible`)."""
        state = {7: "tcp_pose7", 25: "tcp_pose7_qpos9_qvel9"}.get(joints, "mikasa_joints")
        known = {
            "image": IMAGE,
            "wrist_image": WRIST_IMAGE,
            "joints": Component("state", joints, state, field="joints", description="extra.tcp_pose, then agent.qpos, agent.qvel"),
            "cubes": Component("cubes", 0, "cube_xyz_visible", field="cubes", description="per colour: position, 1 when on the table"),
            "ball": Component("ball", 3, "xyz", field="ball", description="the ball's centre (world frame, m)"),
            "goal": Component("goal", 3, "xyz", field="goal", description="the goal region's centre (world frame, m)"),
            "button": Component("button", 3, "xyz", field="button", description="the submit button's top (world frame, m)"),
            "camera_intrinsic": Component("camera_intrinsic", 9, "intrinsic_cv", field="camera_intrinsic"),
            "camera_extrinsic": Component("camera_extrinsic", 12, "extrinsic_cv", field="camera_extrinsic"),
        }
        return tuple(known[f] for f in visible if f in known)

    def spec(self) -> EnvSpec:
        return self._spec

    def _oracle(self) -> int | str | None:
        fact = self._meta.fact
        if fact is None:
            return None
        if getattr(self._env.unwrapped, fact.attr, None) is None:
            raise AdapterError(f"{self._id}: the env has no {fact.attr} after reset")
        return fact.value(self._env.unwrapped)

    def _state_fields(self) -> dict[str, np.ndarray]:
        base = self._env.unwrapped
        return {f.name: f.read(base) for f in self._meta.state} if self._state else {}

    def _oracle_fields(self) -> dict[str, np.ndarray]:
        base = self._env.unwrapped
        return {f.name: f.read(base) for f in self._meta.oracle}

    def seed_global_rngs(self, seed: int) -> None:
        """Python, numpy and torch global RNGs ← seed (ManiSkill forks torch's RNG around the episode draw too)."""
        random.seed(seed)
        np.random.seed(seed)
        self._torch.manual_seed(seed)

    def _fields(self, obs: Any, **kwargs: Any) -> dict[str, Any]:
        fact = self._meta.fact
        evaluator = self._oracle_fields()
        if self._frames:
            # rendered only at the steps the episode's reset asked for (IMEP's frame recorder: the recorded episodes and
            # steps); the others carry a blank frame of the declared shape — a camera pass costs ~0.19 s a step
            shape = self._spec.observation["frame"].shape
            evaluator["frame"] = self._render.frame(self._t, shape, lambda: runtime.base_camera_frame(self._env.unwrapped))
        field = None if fact is None else fact.field
        return translate(obs, oracle=self._oracle(), oracle_field=field, task=self._task, state=self._state_fields(), evaluator=evaluator, **kwargs)

    def reset(self, seed: int, options: Mapping[str, Any], init_state_id: int | None) -> RawStep:
        if init_state_id is not None:
            raise AdapterError(f"{self._id}: MIKASA-Robo has no init-state table; the seed selects the episode")
        check_sim_seed(self._id, "seed", seed, "ManiSkill's env.reset(seed=…) (np.random.RandomState)")
        self.seed_global_rngs(seed)
        self._render.begin(self._id, options)
        self._t = 0
        obs, info = self._env.reset(seed=seed, options=sim_options(options))
        self._seed = seed
        self._success_once = False
        fields = self._fields(obs, seed=seed, info=info)
        # No action taken yet: a reset never reports success.
        fields["success"] = False
        fields["success_once"] = False
        return RawStep(fields=fields, done=False)

    def step(self, action: np.ndarray) -> RawStep:
        batched = np.array(action, dtype=np.float32)[None]  # writable copy; num_envs = 1
        obs, reward, terminated, truncated, info = self._env.step(self._torch.from_numpy(batched))
        self._t += 1
        fields = self._fields(
            obs, seed=self._seed, reward=reward, terminated=terminated, truncated=truncated, info=info, success_once=self._success_once
        )
        self._success_once = fields["success_once"]
        if self._success_mode == "once":
            fields["success"] = fields["success_once"]
        done = fields["truncated"] or fields["elapsed_steps"] >= self._spec.max_steps
        if not self._ignore_terminations:
            done = done or fields["terminated"]
        return RawStep(fields=fields, done=bool(done))

    def close(self) -> None:
        self._env.close()


class MikasaAdapter(Adapter):
    """`makeBatch` hosts a batch in worker processes (the Adapter default: each the single env `make` gives).

    No native `make_batch`: ManiSkill's own vectorisation (`num_envs` > 1, partial reset via `options={'env_idx':
    …}`) needs its GPU backend (3.0.0b15 on CPU: "Cannot set the sim backend to 'cpu' and have multiple
    environments"), GPU PhysX does not give the CPU backend's trajectories, and no GPU was available to check one
    against single envs; a batch is therefore never silently a different simulation than one env per slot.
    """

    name = ADAPTER

    def env_ids(self) -> Sequence[str]:
        return [PREFIX + t for t in TASKS]

    def unavailable(self) -> str | None:
        missing = missing_module([m for m, _, _ in REQUIREMENTS])
        if missing is None:
            return None
        hint = next(h for m, _, h in REQUIREMENTS if m == missing)
        return f"python module '{missing}' is not installed ({hint})"

    def environment(self) -> dict[str, Any]:
        """What `hello.environment.mikasa` reports for the run record: package versions and the Vulkan ICD (renderer)."""
        return {"versions": runtime.package_versions(), "vulkanIcd": runtime.use_venv_vulkan_icd() or "none"}

    def _import(self, task: str) -> tuple[Any, Any, Any, Any]:
        runtime.use_venv_vulkan_icd()
        mods = {m: import_or_unavailable(ADAPTER, m, pkg, hint) for m, pkg, hint in REQUIREMENTS}
        hint = REQUIREMENTS[-1][2]
        import_or_unavailable(ADAPTER, f"mikasa_robo_suite.{TASKS[task].module}.memory_envs", "mikasa-robo-suite", hint)
        registration = import_or_unavailable(ADAPTER, "mani_skill.utils.registration", "mani_skill", REQUIREMENTS[2][2])
        assets = import_or_unavailable(ADAPTER, "mani_skill.utils.assets", "mani_skill", REQUIREMENTS[2][2])
        runtime.cpu_torch(mods["torch"])
        return mods["torch"], mods["gymnasium"], registration, assets

    def make(self, env_id: str, kwargs: Mapping[str, Any]) -> Env:
        task = env_id[len(PREFIX) :]
        if task not in TASKS:
            raise AdapterError(f"unknown MIKASA-Robo env '{env_id}' (known: {', '.join(self.env_ids())})")
        success = kwargs.get("success", "end")
        if success not in SUCCESS_MODES:
            raise AdapterError(
                f"{env_id}: kwargs.success must be 'end' (the last step's) or 'once' (any step's, MIKASA's benchmark metric), got {success!r}"
            )
        make_kwargs = dict(DEFAULT_MAKE_KWARGS)
        user = {k: v for k, v in kwargs.items() if k not in ADAPTER_KWARGS}
        if "num_envs" in user and user["num_envs"] != 1:
            raise AdapterError(
                f"{env_id}: the bridge hosts one env per handle (num_envs must be 1); for several envs per server "
                "use vectorised hosting (simulator.vectorize: true, the makeBatch op)"
            )
        user.pop("num_envs", None)
        make_kwargs.update(user)
        mode = str(make_kwargs["obs_mode"])
        state = mode in STATE_MODES
        if state:
            if not TASKS[task].state:
                raise AdapterError(f"{env_id}: obs_mode {mode!r}: no visible state field carries the task's cue; use obs_mode 'rgb'")
            make_kwargs["obs_mode"] = "state_dict"
        elif "rgb" not in mode:
            raise AdapterError(f"{env_id}: obs_mode must include rgb, or be 'state'/'state_dict' (got {mode!r})")
        torch, gym, registration, assets = self._import(task)
        if TASKS[task].lamp:
            shapes = import_or_unavailable(ADAPTER, "mikasa_robo_suite.vla.utils.shapes", "mikasa-robo-suite", REQUIREMENTS[-1][2])
            runtime.use_lamp_bulb(env_id, shapes, kwargs.get("lamp_bulb"))
        elif "lamp_bulb" in kwargs:
            raise AdapterError(f"{env_id}: make kwarg lamp_bulb applies only to tasks with MIKASA's lamp; remove it")
        runtime.check_assets(env_id, registration, assets, task)
        try:
            env = gym.make(task, num_envs=1, **runtime.render_kwargs(make_kwargs))
        except RuntimeError as exc:
            failure = runtime.render_failure(env_id, exc)
            if failure is None:
                raise
            raise failure from exc
        max_steps = int(registration.REGISTERED_ENVS[task].max_episode_steps)
        return MikasaEnv(
            env_id,
            env,
            torch,
            max_steps=max_steps,
            state=state,
            ignore_terminations=bool(kwargs.get("ignore_terminations", True)),
            control_mode=str(make_kwargs["control_mode"]),
            frames=bool(kwargs.get("frames", False)),
            success=success,
        )
