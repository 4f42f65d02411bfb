"""LIBERO chain executor without demonstrations: env `LIBERO-ChainDrawers-scripted`.

The same ChainBench decision env as `LIBERO-ChainDrawers` (adapters/libero_chain.py: the K = 2 drawers of
LIBERO-90 KITCHEN_SCENE1, each executed in its own task's `OffScreenRenderEnv` and judged by that task's
own `check_success()`), but the registered motor source is **a scripted drawer-opening controller on the
robot's own state** instead of replayed LIBERO-90 demonstrations (which cannot be had from the package
registries). It needs only the installed LIBERO package:

* Init state — entry `seed mod n` of the task's own init states (`suite.get_task_init_states(i)`), then
  `NUM_STEPS_WAIT` no-op steps (openpi's warm-up).
* Motor — the hook controller of `imep_sim_bridge/libero_chain_controller.py` (gripper closed, turned
  along the handle bar and pitched 45° toward the cabinet; fingertips behind the bar, then pull) toward
  the handle of drawer k, read from the simulator at the start of the execution; at most the plan's
  length (`STEPS`) in steps, stopping at LIBERO's first `done` (= `check_success()`).
* Registry — like a demo file, the controller's source file and the task's init states are registered by
  SHA-256 (`registry` evaluator field: `controllerFile`, `controllerSha256`, `initStatesSha256` per drawer);
  each execution's evaluator fields name them where the demo route names its demo: `demoFile` = the
  controller file, `demoSha256` = its SHA-256, `demoIndex` = the init-state index.

Measured on the real stack (robosuite 1.4.0, MuJoCo 2.3.7): the controller opens both drawers from
each of the tasks' 50 init states (top 50/50, bottom 50/50). The top-down grasp this env used before
(the hosted policy's `PLANS["open"]`) opened the top drawer only: a top-down grasp of the bottom handle
is blocked by the handles above it.
"""

from __future__ import annotations

import hashlib
import inspect
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from .. import libero_chain_controller as controller
from ..errors import AdapterError, BadAction
from ..spec import RawStep
from .libero_chain_env import SCRIPTED_ENV_ID, DrawerTask, LiberoChainEnv
from .libero_mem import HANDLE_SIZE, NUM_STEPS_WAIT, WAIT_ACTION
from .libero_soft_reset import soft_reset

MOTOR_SOURCE = "scripted-osc-hook-drawer"
CONTROLLER_FILE = "imep_sim_bridge/libero_chain_controller.py"


def controller_sha256() -> str:
    return hashlib.sha256(Path(inspect.getsourcefile(controller) or "").read_bytes()).hexdigest()


@dataclass(frozen=True)
class ScriptedDrawer:
    task: DrawerTask
    language: str
    bddl_file: str
    init_states: Any
    init_sha256: str
    env: Any

    def wire(self, controller_sha: str = "") -> dict[str, Any]:
        controller_sha = controller_sha or controller_sha256()
        return {
            "drawer": self.task.drawer,
            "suite": self.task.suite,
            "taskIndex": self.task.task_index,
            "task": self.task.task_name,
            "language": self.language,
            "goal": self.task.goal,
            "controllerFile": CONTROLLER_FILE,
            "controllerSha256": controller_sha,
            "initStates": len(self.init_states),
            "initStatesSha256": self.init_sha256,
        }


def handle_geom(sim: Any, drawer: str) -> int:
    m = sim.model
    body = m.body_name2id(f"wooden_cabinet_1_cabinet_{drawer}")
    for g in range(m.ngeom):
        if m.geom_bodyid[g] == body and np.allclose(m.geom_size[g], HANDLE_SIZE, atol=1e-5):
            return g
    raise AdapterError(f"{SCRIPTED_ENV_ID}: no {drawer}-drawer handle geom of size {HANDLE_SIZE} in this LIBERO's wooden cabinet")


class LiberoChainScriptedEnv(LiberoChainEnv):
    def __init__(self, env_id: str, drawers: Sequence[ScriptedDrawer], state_of: Any) -> None:
        self._scripted = tuple(drawers)
        self._state_of = state_of
        sha = controller_sha256()
        super().__init__(env_id, drawers)  # type: ignore[arg-type]  (uses task, language and wire())
        self._registry = json.dumps(
            {"env": env_id, "motorSource": MOTOR_SOURCE, "K": self._k, "drawers": [d.wire(sha) for d in self._scripted]},
            sort_keys=True,
            separators=(",", ":"),
        )

    def step(self, action: np.ndarray) -> RawStep:
        q = self._query
        if q is None or q["done"]:
            raise AdapterError(f"{self._id}: step without a query reset (one decision per reset)")
        value = float(np.asarray(action).reshape(-1)[0])
        if not value.is_integer() or not 0 <= value < self._k:
            raise BadAction(f"{self._id}: the action is the drawer index, an integer in 0..{self._k - 1}; got {value!r}")
        k = int(value)
        d = self._scripted[k]
        index = q["seed"] % len(d.init_states)
        env = d.env
        env.seed(q["executorSeed"])
        soft_reset(env)  # the env is reused across decisions: nothing of the previous one carries over
        env.set_init_state(d.init_states[index])
        obs: Mapping[str, Any] = {}
        for _ in range(NUM_STEPS_WAIT):
            obs, _reward, _done, _info = env.step(list(WAIT_ACTION))
        handle = np.asarray(env.sim.data.geom_xpos[handle_geom(env.sim, d.task.drawer)], dtype=np.float64).copy()
        steps, done_at = controller.open_drawer(env, obs, handle, self._state_of)
        executed = bool(env.check_success())
        q["done"] = True
        fields = {
            "instruction": self._instruction(f"the {q['object']}"),
            "role": "query",
            "object": q["object"],
            "correctDrawer": q["drawer"],
            "seed": q["seed"],
            "executorSeed": q["executorSeed"],
            "decision": k,
            "executed": executed,
            "success": executed and k == q["drawer"],
            "task": d.task.task_name,
            "demoFile": CONTROLLER_FILE,
            "demoSha256": controller_sha256(),
            "demoIndex": index,
            "motorSteps": steps,
            "doneAt": done_at,
            "registry": self._registry,
        }
        return RawStep(fields=fields, done=True)


def make_scripted(env_id: str, tasks: Sequence[DrawerTask], benchmark: Any, libero_root: Any, envs: Any, state_of: Any) -> LiberoChainScriptedEnv:
    """One camera-less `OffScreenRenderEnv` per drawer task, with the task's own init states."""
    suites: dict[str, Any] = {}
    loaded: list[ScriptedDrawer] = []
    try:
        for t in tasks:
            if t.suite not in suites:
                cls = benchmark.get_benchmark_dict().get(t.suite)
                if cls is None:
                    raise AdapterError(f"{env_id}: this LIBERO has no benchmark suite '{t.suite}'")
                suites[t.suite] = cls()
            suite = suites[t.suite]
            task = suite.get_task(t.task_index)
            if task.name != t.task_name:
                raise AdapterError(f"{env_id}: this LIBERO's {t.suite} task {t.task_index} is {task.name}, not the registered {t.task_name}")
            init = np.ascontiguousarray(np.asarray(suite.get_task_init_states(t.task_index)))
            bddl = Path(libero_root.get_libero_path("bddl_files")) / task.problem_folder / task.bddl_file
            env = envs.OffScreenRenderEnv(bddl_file_name=str(bddl), use_camera_obs=False, hard_reset=False)
            loaded.append(ScriptedDrawer(t, str(task.language), str(bddl), init, hashlib.sha256(init.tobytes()).hexdigest(), env))
    except BaseException:
        for d in loaded:
            d.env.close()
        raise
    return LiberoChainScriptedEnv(env_id, loaded, state_of)
