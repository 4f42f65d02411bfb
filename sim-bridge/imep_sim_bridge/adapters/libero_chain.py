"""LIBERO chain executor: env `LIBERO-ChainDrawers` — one ChainBench decision (drawer k of K) carried out
in LIBERO by a registered motor source, success read from LIBERO's own `check_success()`.

A ChainBench query commits to a drawer index k; LIBERO takes 7-D OSC_POSE actions for hundreds of
steps. Between the two sits the motor source, registered here: **replay of LIBERO's own demonstration
actions** (the human teleoperation demos in LIBERO's datasets) for the task that opens drawer k.

Registry (`REGISTRY`, reported by `registry_wire()` in every step's evaluator fields):
  LIBERO-ChainDrawers, K = 2, scene KITCHEN_SCENE1 of LIBERO-90 (the only LIBERO scene with two pure
  drawer-opening tasks on one cabinet; both BDDL files share every region, fixture and object and differ
  only in `:language` and `:goal`):
    k = 0 (drawer-1): libero_90 task 7  KITCHEN_SCENE1_open_the_top_drawer_of_the_cabinet
                      goal (Open wooden_cabinet_1_top_region)
    k = 1 (drawer-2): libero_90 task 6  KITCHEN_SCENE1_open_the_bottom_drawer_of_the_cabinet
                      goal (Open wooden_cabinet_1_bottom_region)

Written against Lifelong-Robot-Learning/LIBERO @ 8f1084e3 (the same revision as adapters/libero.py):

* Tasks — `benchmark.get_benchmark_dict()["libero_90"]()` (LIBERO_90 asserts task_order_index 0 and
  keeps libero_suite_task_map order), `suite.get_task(i)` → Task(name, language, problem,
  problem_folder, bddl_file, init_states_file); the adapter refuses a LIBERO whose task i is not the
  registered name. BDDL: `get_libero_path("bddl_files") / task.problem_folder / task.bddl_file`.
* Demonstrations — `suite.get_task_demonstration(i)` = "<problem_folder>/<name>_demo.hdf5", relative to
  `get_libero_path("datasets")` (benchmark/__init__.py; files from benchmark_scripts/
  download_libero_datasets.py). Layout (scripts/create_dataset.py): `data/demo_<n>/actions` (T×7) and
  `data/demo_<n>/states` (flattened MuJoCo states; `states[j]` is the state before `actions[j]`). Read
  with `h5py.File(path, "r")`. Each file's SHA-256 is computed at `make` and refused when it differs
  from a pin (`--libero-demo-pins FILE`: JSON {task name: sha256}).
* Init state — the demo's own first state `states[0]`: open-loop demo actions are only meaningful from
  the state they were recorded from, so the registered init state of an execution is (demo file, demo
  index), not an entry of the task's `.pruned_init` file. The demo index is `sceneSeed mod n_demos`
  (demos ordered by their integer suffix): the chain's scene seed selects the scene.
* Config — as adapters/libero.py: `make` answers E_SIM_UNAVAILABLE when LIBERO's config file
  (`$LIBERO_CONFIG_PATH/config.yaml`, default `~/.libero/config.yaml`) is missing, instead of letting
  `import libero.libero` prompt for it on stdin.
* Env — one `OffScreenRenderEnv(bddl_file_name=…, camera_heights=r, camera_widths=r)` per drawer
  (env_wrapper.py). Execution of choice k: `env.seed(executorSeed)`, `env.reset()`,
  `env.set_init_state(states[0])` (= set_state_from_flattened + forward), then
  `obs, reward, done, info = env.step(action.tolist())` for each demo action, stopping at the first
  `done` (bddl_base_domain.step sets done = _check_success(), as openpi's loop stops); `env.seed` is
  `np.random.seed`, so an executorSeed above 2^32 − 1 is refused at reset; `executed =
  bool(env.check_success())` after the last step — LIBERO's own goal predicate for drawer k.
  `success = executed and k == hidden drawer` (ChainBench: a wrong choice never succeeds).

The query observation is the same whatever the hidden fact: the instruction naming the query object and
the K registered drawers (method-visible); everything else is evaluator-only.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np

from ..errors import AdapterError, BadAction
from ..spec import ActionSpec, EnvSpec, FieldSpec, RawStep
from .base import Adapter, Env, check_sim_seed, import_or_unavailable, missing_module
from . import renderer
from .libero import ENV_SEED, INSTALL_HINT, LIBERO_ENV_RESOLUTION, is_pro_packaging, missing_config, require_config

ADAPTER = "libero-chain"
ENV_ID = "LIBERO-ChainDrawers"
#: The same chain, executed by a scripted controller instead of demos (adapters/libero_chain_scripted.py).
SCRIPTED_ENV_ID = "LIBERO-ChainDrawers-scripted"
MOTOR_SOURCE = "libero-demo-replay"
H5PY_HINT = "pip install h5py (LIBERO's requirements.txt installs it)"
_DEMO = re.compile(r"^demo_(0|[1-9][0-9]*)$")
_SHA = re.compile(r"^[0-9a-f]{64}$")


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


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def load_pins(path: str) -> dict[str, str]:
    """`{task name: sha256}` from a JSON file (the --libero-demo-pins flag)."""
    try:
        raw = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ValueError(f"--libero-demo-pins {path}: cannot read a JSON object ({exc})") from exc
    if not isinstance(raw, dict):
        raise ValueError(f"--libero-demo-pins {path}: expected a JSON object {{task name: sha256}}")
    for name, sha in raw.items():
        if not isinstance(sha, str) or _SHA.match(sha) is None:
            raise ValueError(f"--libero-demo-pins {path}: {name}: expected 64 lowercase hex digits, got {sha!r}")
    return dict(raw)


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


def read_demos(h5py: Any, path: Path, where: str) -> tuple[Demo, ...]:
    """Every `data/demo_<n>` of a LIBERO demo file: actions (T×7) and states[0], ordered by n."""
    out: list[Demo] = []
    with h5py.File(str(path), "r") as f:
        names = sorted((n for n in f["data"].keys() if _DEMO.match(n)), key=lambda n: int(n[5:]))
        if not names:
            raise AdapterError(f"{where}: {path} holds no data/demo_<n> groups")
        for name in names:
            actions = np.asarray(f[f"data/{name}/actions"][()], dtype=np.float64)
            states = np.asarray(f[f"data/{name}/states"][()], dtype=np.float64)
            if actions.ndim != 2 or actions.shape[1] != 7 or actions.shape[0] == 0:
                raise AdapterError(f"{where}: {path} data/{name}/actions has shape {list(actions.shape)}, expected [T, 7] with T ≥ 1")
            if states.ndim != 2 or states.shape[0] == 0:
                raise AdapterError(f"{where}: {path} data/{name}/states has shape {list(states.shape)}, expected [T, n]")
            out.append(Demo(int(name[5:]), actions, states[0].copy()))
    return tuple(out)


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


class LiberoChainAdapter(Adapter):
    name = ADAPTER
    numba_packages = ("robosuite",)  # its controllers and transforms (robosuite/utils/numba.py)

    def __init__(self, pins: Mapping[str, str] | None = None) -> None:
        self._pins = dict(pins or {})

    def owns(self, env_id: str) -> bool:
        return env_id in REGISTRY or env_id == SCRIPTED_ENV_ID

    def env_ids(self) -> Sequence[str]:
        return [*REGISTRY, SCRIPTED_ENV_ID]

    def unavailable(self) -> str | None:
        missing = missing_module(["libero", "robosuite", "h5py"])
        if missing is not None:
            return f"python module '{missing}' is not installed ({INSTALL_HINT}; {H5PY_HINT})"
        return None if is_pro_packaging() else missing_config()

    def make(self, env_id: str, kwargs: Mapping[str, Any]) -> Env:
        tasks = REGISTRY.get(ENV_ID if env_id == SCRIPTED_ENV_ID else env_id)
        if tasks is None:
            raise AdapterError(f"{env_id}: not a registered LIBERO chain env (registered: {', '.join(REGISTRY)})")
        k = kwargs.get("K", len(tasks))
        if k != len(tasks):
            names = ", ".join(t.drawer for t in tasks)
            raise AdapterError(
                f"{env_id}: make kwargs.K = {k!r}, but this env registers K = {len(tasks)} drawers ({names}); "
                f"replay a manifest generated with --K {len(tasks)}"
            )
        require_config(ADAPTER)
        if missing_module(["libero"]) is None:
            renderer.choose(ADAPTER)  # before LIBERO imports robosuite and mujoco
        benchmark = import_or_unavailable(ADAPTER, "libero.libero.benchmark", "libero", INSTALL_HINT)
        libero_root = import_or_unavailable(ADAPTER, "libero.libero", "libero", INSTALL_HINT)
        envs = import_or_unavailable(ADAPTER, "libero.libero.envs", "libero", INSTALL_HINT)
        if env_id == SCRIPTED_ENV_ID:
            from .libero import openpi_state
            from .libero_chain_scripted import make_scripted

            return make_scripted(env_id, tasks, benchmark, libero_root, envs, openpi_state)
        h5py = import_or_unavailable(ADAPTER, "h5py", "h5py", H5PY_HINT)
        resolution = int(kwargs.get("resolution", LIBERO_ENV_RESOLUTION))
        suites: dict[str, Any] = {}
        datasets = Path(libero_root.get_libero_path("datasets"))
        loaded: list[LoadedDrawer] = []
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
                rel = str(suite.get_task_demonstration(t.task_index))
                path = datasets / rel
                if not path.is_file():
                    raise AdapterError(
                        f"{env_id}: demo file {path} is missing (drawer {t.drawer}: {t.task_name}); download LIBERO-90 with "
                        "`python benchmark_scripts/download_libero_datasets.py --datasets libero_90` in the LIBERO checkout"
                    )
                sha = sha256_file(path)
                pin = self._pins.get(t.task_name)
                if pin is not None and pin != sha:
                    raise AdapterError(f"{env_id}: demo file {path} has SHA-256 {sha}, but --libero-demo-pins pins {pin} for {t.task_name}")
                demos = read_demos(h5py, path, env_id)
                bddl = Path(libero_root.get_libero_path("bddl_files")) / task.problem_folder / task.bddl_file
                env = envs.OffScreenRenderEnv(bddl_file_name=str(bddl), camera_heights=resolution, camera_widths=resolution)
                loaded.append(LoadedDrawer(t, str(task.language), str(bddl), rel, sha, demos, env))
        except BaseException:
            for d in loaded:
                d.env.close()
            raise
        return LiberoChainEnv(env_id, loaded)
