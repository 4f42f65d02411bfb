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
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import AdapterError
from . import renderer
from .base import Adapter, Env, import_or_unavailable, missing_module
from .libero import INSTALL_HINT, LIBERO_ENV_RESOLUTION, is_pro_packaging, missing_config, openpi_state, require_config
from .libero_chain_env import ENV_ID, REGISTRY, SCRIPTED_ENV_ID, Demo, LiberoChainEnv, LoadedDrawer
from .libero_chain_scripted import make_scripted

ADAPTER = "libero-chain"
H5PY_HINT = "pip install h5py (LIBERO's requirements.txt installs it)"
_DEMO = re.compile(r"^demo_(0|[1-9][0-9]*)$")
_SHA = re.compile(r"^[0-9a-f]{64}$")


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


__all__ = ["ADAPTER", "ENV_ID", "REGISTRY", "SCRIPTED_ENV_ID", "LiberoChainAdapter", "load_pins", "read_demos", "sha256_file"]
