"""The LIBERO chain executor's decision env, shared by its two motor sources: `LIBERO-ChainDrawers` (replay of
LIBERO's own demonstrations, adapters/libero_chain.py) and `LIBERO-ChainDrawers-scripted` (a scripted
controller, adapters/libero_chain_scripted.py, which subclasses `LiberoChainEnv`). The registry of drawer tasks,
the query reset, the spec and the demo-replay step live here; adapters/libero_chain.py's docstring describes the
chain, and its adapter builds either env.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import AdapterError, BadAction
from ..spec import ActionSpec, EnvSpec, FieldSpec, RawStep
from .base import Env, check_sim_seed
from .libero import ENV_SEED

ENV_ID = "LIBERO-ChainDrawers"
#: The same chain, executed by a scripted controller instead of demos (adapters/libero_chain_scripted.py).
SCRIPTED_ENV_ID = "LIBERO-ChainDrawers-scripted"
MOTOR_SOURCE = "libero-demo-replay"


@dataclass(frozen=True)
class DrawerTask:
    """Drawer k of the chain: the LIBERO task whose demos open it."""

    drawer: str
    suite: str
    task_index: int
    task_name: str
    goal: str


#: env id → the K drawer tasks, in drawer order (k = 0 … K−1).
REGISTRY: dict[str, tuple[DrawerTask, ...]] = {
    ENV_ID: (
        DrawerTask("top", "libero_90", 7, "KITCHEN_SCENE1_open_the_top_drawer_of_the_cabinet", "(Open wooden_cabinet_1_top_region)"),
        DrawerTask("bottom", "libero_90", 6, "KITCHEN_SCENE1_open_the_bottom_drawer_of_the_cabinet", "(Open wooden_cabinet_1_bottom_region)"),
    ),
}


@dataclass(frozen=True)
class Demo:
    index: int
    actions: np.ndarray  # (T, 7) float64
    init_state: np.ndarray  # states[0]


@dataclass(frozen=True)
class LoadedDrawer:
    task: DrawerTask
    language: str
    bddl_file: str
    demo_file: str  # relative to get_libero_path("datasets"), as get_task_demonstration returns it
    demo_sha256: str
    demos: tuple[Demo, ...]
    env: Any

    def wire(self) -> dict[str, Any]:
        return {
            "drawer": self.task.drawer,
            "suite": self.task.suite,
            "taskIndex": self.task.task_index,
            "task": self.task.task_name,
            "language": self.language,
            "goal": self.task.goal,
            "demoFile": self.demo_file,
            "demoSha256": self.demo_sha256,
            "demos": len(self.demos),
        }


class LiberoChainEnv(Env):
    def __init__(self, env_id: str, drawers: Sequence[LoadedDrawer]) -> None:
        self._id = env_id
        self._drawers = tuple(drawers)
        self._k = len(self._drawers)
        self._registry = json.dumps(
            {"env": env_id, "motorSource": MOTOR_SOURCE, "K": self._k, "drawers": [d.wire() for d in self._drawers]},
            sort_keys=True,
            separators=(",", ":"),
        )
        self._query: dict[str, Any] | None = None
        observation = {
            "instruction": FieldSpec((), "string"),
            "role": FieldSpec((), "string"),
            "object": FieldSpec((), "string"),
            "correctDrawer": FieldSpec((), "int64"),
            "seed": FieldSpec((), "int64"),
            "executorSeed": FieldSpec((), "int64"),
            "decision": FieldSpec((), "int64"),
            "executed": FieldSpec((), "bool"),
            "success": FieldSpec((), "bool"),
            "task": FieldSpec((), "string"),
            "demoFile": FieldSpec((), "string"),
            "demoSha256": FieldSpec((), "string"),
            "demoIndex": FieldSpec((), "int64"),
            "motorSteps": FieldSpec((), "int64"),
            "doneAt": FieldSpec((), "int64"),
            "registry": FieldSpec((), "string"),
        }
        evaluator = tuple(k for k in observation if k != "instruction")
        self._spec = EnvSpec(
            id=env_id,
            max_steps=1,
            action=ActionSpec(shape=(1,), dtype="float32", low=0.0, high=float(self._k - 1)),
            observation=observation,
            method_visible=("instruction",),
            evaluator_only=evaluator,
            instruction=self._instruction("the object"),
        )

    def spec(self) -> EnvSpec:
        return self._spec

    @property
    def registry(self) -> str:
        """Canonical JSON of the registered motor source (tasks, demo files and their SHA-256)."""
        return self._registry

    def _instruction(self, obj: str) -> str:
        options = ", ".join(f"{k}: the {d.task.drawer} drawer" for k, d in enumerate(self._drawers))
        return f"which drawer of the cabinet holds {obj}? ({options})"

    def reset(self, seed: int, options: Mapping[str, Any], init_state_id: int | None) -> RawStep:
        role = options.get("role", "query")
        if role != "query":
            raise AdapterError(f"{self._id}: reset options.role {role!r}: this env executes query decisions only (role 'query')")
        drawer = options.get("drawer")
        if isinstance(drawer, bool) or not isinstance(drawer, int) or not 0 <= drawer < self._k:
            raise AdapterError(f"{self._id}: reset options.drawer must be the hidden drawer index 0..{self._k - 1}, got {drawer!r}")
        obj = options.get("object")
        if not isinstance(obj, str) or not obj:
            raise AdapterError(f"{self._id}: reset options.object must be the query object's name, got {obj!r}")
        executor_seed = options.get("executorSeed", seed)
        if isinstance(executor_seed, bool) or not isinstance(executor_seed, int) or executor_seed < 0:
            raise AdapterError(f"{self._id}: reset options.executorSeed must be a non-negative integer, got {executor_seed!r}")
        field = "options.executorSeed" if "executorSeed" in options else "seed (the default executorSeed)"
        check_sim_seed(self._id, field, executor_seed, ENV_SEED)
        if init_state_id is not None:
            raise AdapterError(f"{self._id}: initStateId is not taken: the scene seed selects the demo (seed mod the number of demos)")
        self._query = {"seed": seed, "drawer": drawer, "object": obj, "executorSeed": executor_seed, "done": False}
        fields = {
            "instruction": self._instruction(f"the {obj}"),
            "role": "query",
            "object": obj,
            "correctDrawer": drawer,
            "seed": seed,
            "executorSeed": executor_seed,
            "registry": self._registry,
        }
        return RawStep(fields=fields, done=False, first_frame_hash=None)

    def step(self, action: np.ndarray) -> RawStep:
        q = self._query
        if q is None or q["done"]:
            raise AdapterError(f"{self._id}: step without a query reset (one decision per reset)")
        value = float(np.asarray(action).reshape(-1)[0])
        if not value.is_integer() or not 0 <= value < self._k:
            raise BadAction(f"{self._id}: the action is the drawer index, an integer in 0..{self._k - 1}; got {value!r}")
        k = int(value)
        d = self._drawers[k]
        demo = d.demos[q["seed"] % len(d.demos)]
        env = d.env
        env.seed(q["executorSeed"])
        env.reset()
        env.set_init_state(demo.init_state)
        done_at = -1
        steps = 0
        for a in demo.actions:
            _obs, _reward, done, _info = env.step(a.tolist())
            steps += 1
            if done:
                done_at = steps
                break
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
            "demoFile": d.demo_file,
            "demoSha256": d.demo_sha256,
            "demoIndex": demo.index,
            "motorSteps": steps,
            "doneAt": done_at,
            "registry": self._registry,
        }
        return RawStep(fields=fields, done=True)

    def close(self) -> None:
        for d in self._drawers:
            d.env.close()


__all__ = ["ENV_ID", "MOTOR_SOURCE", "REGISTRY", "SCRIPTED_ENV_ID", "Demo", "DrawerTask", "LiberoChainEnv", "LoadedDrawer"]
