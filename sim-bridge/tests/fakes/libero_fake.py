"""Fake LIBERO (libero.libero, .benchmark, .envs) and torch, built lazily at import time.

As upstream (Lifelong-Robot-Learning/LIBERO @ 8f1084e3):

* importing `libero.libero` runs libero/libero/__init__.py's config step: when
  `$LIBERO_CONFIG_PATH/config.yaml` (default `~/.libero/config.yaml`) does not exist it asks
  `input("Do you want to specify a custom path for the dataset folder? (Y/N): ")` and then writes the
  file (with stdin closed, `input` raises EOFError "EOF when reading a line"). Tests must set
  LIBERO_CONFIG_PATH (the fake refuses to touch the home directory).
* `get_task_init_states(i)` is `torch.load(os.path.join(get_libero_path("init_states"),
  task.problem_folder, task.init_states_file))` of a pickled numpy array. The fake `torch.load` is
  torch 2.6's by default (`weights_only` defaults to True and refuses such pickles with
  `_pickle.UnpicklingError: Weights only load failed…`); `world.torch_version = "1.11"` gives torch
  1.11's (no `weights_only` parameter: extra keyword arguments go to the Unpickler, which rejects them).

Observations are robosuite's (camera_heights = camera_widths = 256), images stored upside down
and mirrored as robosuite renders them (hence openpi's 180° rotation); their keys, dtypes and shapes
are checked against the real LIBERO's (tests/fixtures/libero/real.json, recorded by
tests/fixtures/record_libero_fixture.py) by tests/test_libero_fake_vs_real.py:

    agentview_image (256, 256, 3) u8, robot0_eye_in_hand_image (256, 256, 3) u8,
    robot0_eef_pos (3,) f64, robot0_eef_quat (4,) f64 (x, y, z, w), robot0_gripper_qpos (2,) f64,
    robot0_joint_pos (7,) f64, robot0_joint_pos_cos/sin (7,), robot0_joint_vel (7,),
    robot0_gripper_qvel (2,), robot0_proprio-state (39,), object-state (28,), <object>_pos (3,),
    <object>_quat (4,), <object>_to_robot0_eef_pos (3,), <object>_to_robot0_eef_quat (4,) f32
"""

from __future__ import annotations

import os
import pickle
from typing import Any, NamedTuple

import numpy as np


class Task(NamedTuple):  # libero/libero/benchmark/__init__.py
    name: str
    language: str
    problem: str
    problem_folder: str
    bddl_file: str
    init_states_file: str


TASK_NAMES = [f"pick_up_the_black_bowl_{i}_and_place_it_on_the_plate" for i in range(10)]


class FakeWorld:
    def __init__(self) -> None:
        self.envs: list[FakeOffScreenRenderEnv] = []
        self.torch_version = "2.6"
        self.load_calls: list[tuple[str, Any]] = []

    # ---- libero.libero.benchmark
    def get_benchmark_dict(self, help: bool = False) -> dict[str, Any]:
        world = self

        class LIBERO_SPATIAL:
            def __init__(self, task_order_index: int = 0) -> None:
                self.name = "libero_spatial"
                self.task_order_index = task_order_index
                self.tasks = [Task(n, n.replace("_", " "), "Libero", "libero_spatial", f"{n}.bddl", f"{n}.pruned_init") for n in TASK_NAMES]
                self.n_tasks = len(self.tasks)

            def get_task(self, i: int) -> Task:
                return self.tasks[i]

            def get_task_init_states(self, i: int) -> np.ndarray:
                init_states_path = os.path.join(world.get_libero_path("init_states"), self.tasks[i].problem_folder, self.tasks[i].init_states_file)
                return world.torch_load(init_states_path)  # upstream: torch.load(init_states_path)

        world.benchmark_cls = LIBERO_SPATIAL
        return {"libero_spatial": LIBERO_SPATIAL}

    # ---- libero.libero
    @staticmethod
    def get_libero_path(query_key: str) -> str:
        return {"bddl_files": "/fake/libero/bddl_files", "init_states": "/fake/libero/init_files"}[query_key]

    # ---- torch.load over the fake init-state files: {path: flattened MuJoCo states, 50 per task}
    def init_state_files(self) -> dict[str, np.ndarray]:
        out: dict[str, np.ndarray] = {}
        for i, n in enumerate(TASK_NAMES):
            states = np.zeros((50, 79), np.float64)
            states[:, 0] = np.arange(50) + 100 * i
            out[os.path.join(self.get_libero_path("init_states"), "libero_spatial", f"{n}.pruned_init")] = states
        return out

    def _read(self, f: Any) -> np.ndarray:
        path = os.fspath(f)
        files = self.init_state_files()
        if path not in files:
            raise FileNotFoundError(2, "No such file or directory", path)
        return files[path].copy()

    def torch_load_2_6(
        self,
        f: Any,
        map_location: Any = None,
        pickle_module: Any = None,
        *,
        weights_only: bool | None = None,
        mmap: bool | None = None,
        **pickle_load_args: Any,
    ) -> Any:
        """torch 2.6 `torch.load`: weights_only=None means True, which refuses a pickled numpy array."""
        self.load_calls.append((os.fspath(f), weights_only))
        data = self._read(f)
        if weights_only is None or weights_only:
            raise pickle.UnpicklingError(
                "Weights only load failed. This file can still be loaded, to do so you have two options, do those steps "
                "only if you trust the source of the checkpoint. (1) In PyTorch 2.6, we changed the default value of the "
                "`weights_only` argument in `torch.load` from `False` to `True`. [...] WeightsUnpickler error: Unsupported "
                "global: GLOBAL numpy.core.multiarray._reconstruct was not an allowed global by default."
            )
        return data

    def torch_load_1_11(self, f: Any, map_location: Any = None, pickle_module: Any = pickle, **pickle_load_args: Any) -> Any:
        """torch 1.11 `torch.load`: no weights_only; extra keyword arguments reach pickle's Unpickler."""
        self.load_calls.append((os.fspath(f), pickle_load_args.get("weights_only", "absent")))
        for key in pickle_load_args:
            raise TypeError(f"'{key}' is an invalid keyword argument for Unpickler()")
        return self._read(f)

    def torch_load(self, f: Any, *args: Any, **kwargs: Any) -> Any:
        load = self.torch_load_1_11 if self.torch_version == "1.11" else self.torch_load_2_6
        return load(f, *args, **kwargs)

    # ---- libero/libero/__init__.py's import-time config step
    def libero_module(self) -> dict[str, Any]:
        if "LIBERO_CONFIG_PATH" not in os.environ:
            raise AssertionError("[fake] tests must set LIBERO_CONFIG_PATH (the fake never writes ~/.libero)")
        write_config_or_prompt()
        return {"get_libero_path": self.get_libero_path}

    def offscreen_env(self, **kwargs: Any) -> FakeOffScreenRenderEnv:
        env = FakeOffScreenRenderEnv(**kwargs)
        self.envs.append(env)
        return env

    def factories(self) -> dict[str, Any]:
        return {
            "libero": lambda: {},
            "libero.libero": self.libero_module,
            "libero.libero.benchmark": lambda: {"get_benchmark_dict": self.get_benchmark_dict},
            "libero.libero.envs": lambda: {"OffScreenRenderEnv": self.offscreen_env},
            "robosuite": lambda: {},
            "torch": lambda: {"load": self.torch_load_1_11 if self.torch_version == "1.11" else self.torch_load_2_6},
        }


def write_config_or_prompt() -> None:
    """libero/libero/__init__.py's module-level config step, same statements (yaml.dump written by hand)."""
    libero_config_path = os.environ.get("LIBERO_CONFIG_PATH", os.path.expanduser("~/.libero"))
    config_file = os.path.join(libero_config_path, "config.yaml")
    if not os.path.exists(libero_config_path):
        os.makedirs(libero_config_path)
    if not os.path.exists(config_file):
        root = "/fake/libero"
        default_path_dict = {
            "benchmark_root": root,
            "bddl_files": f"{root}/./bddl_files",
            "init_states": f"{root}/./init_files",
            "datasets": f"{root}/../datasets",
            "assets": f"{root}/./assets",
        }
        answer = input("Do you want to specify a custom path for the dataset folder? (Y/N): ").lower()
        if answer == "y":
            custom_dataset_path = input("Enter the path where you want to store the datasets: ")
            full_custom_dataset_path = os.path.join(os.path.abspath(os.path.expanduser(custom_dataset_path)), "datasets")
            confirm_answer = input().lower()
            if confirm_answer == "y":
                default_path_dict["datasets"] = full_custom_dataset_path
        with open(config_file, "w") as f:
            f.write("".join(f"{k}: {v}\n" for k, v in sorted(default_path_dict.items())))


class FakeOffScreenRenderEnv:
    """libero/libero/envs/env_wrapper.py OffScreenRenderEnv look-alike."""

    def __init__(self, bddl_file_name: str, camera_heights: int = 128, camera_widths: int = 128, **kwargs: Any) -> None:
        self.bddl_file_name = bddl_file_name
        self.h, self.w = camera_heights, camera_widths
        self.kwargs = kwargs
        self.calls: list[tuple[str, Any]] = []
        self.state = None
        self.t = 0
        self.closed = False

    def _obs(self) -> dict[str, Any]:
        yy, xx = np.mgrid[0 : self.h, 0 : self.w]
        agent = np.stack([yy % 256, xx % 256, np.full_like(yy, self.t % 256)], axis=-1).astype(np.uint8)
        wrist = (255 - agent).astype(np.uint8)
        return {
            "agentview_image": agent,
            "robot0_eye_in_hand_image": wrist,
            "robot0_eef_pos": np.array([0.1, 0.2, 0.3]),
            "robot0_eef_quat": np.array([0.0, 0.0, np.sin(np.pi / 4), np.cos(np.pi / 4)]),  # 90° about z
            "robot0_gripper_qpos": np.array([0.04, -0.04]),
            "robot0_joint_pos": np.zeros(7),
            "robot0_joint_pos_cos": np.ones(7),
            "robot0_joint_pos_sin": np.zeros(7),
            "robot0_joint_vel": np.zeros(7),
            "robot0_gripper_qvel": np.zeros(2),
            "robot0_proprio-state": np.zeros(39),
            # objects as KITCHEN_SCENE1 has them; the *_to_robot0_eef_quat keys are float32 in robosuite 1.4.0
            "akita_black_bowl_1_pos": np.zeros(3),
            "akita_black_bowl_1_quat": np.array([0.0, 0.0, 0.0, 1.0]),
            "akita_black_bowl_1_to_robot0_eef_pos": np.zeros(3),
            "akita_black_bowl_1_to_robot0_eef_quat": np.array([0.0, 0.0, 0.0, 1.0], np.float32),
            "plate_1_pos": np.zeros(3),
            "plate_1_quat": np.array([0.0, 0.0, 0.0, 1.0]),
            "plate_1_to_robot0_eef_pos": np.zeros(3),
            "plate_1_to_robot0_eef_quat": np.array([0.0, 0.0, 0.0, 1.0], np.float32),
            "object-state": np.zeros(28),
        }

    def seed(self, seed: int) -> None:
        self.calls.append(("seed", seed))
        np.random.seed(seed)  # bddl_base_domain.py: def seed(self, seed): np.random.seed(seed)

    def reset(self) -> dict[str, Any]:
        self.calls.append(("reset", None))
        self.t = 0
        return self._obs()

    def set_init_state(self, init_state: np.ndarray) -> dict[str, Any]:
        self.calls.append(("set_init_state", float(init_state[0])))
        self.state = init_state
        return self._obs()

    def step(self, action: list[float]) -> tuple[dict, float, bool, dict]:
        assert isinstance(action, list), "openpi passes action.tolist()"
        self.calls.append(("step", list(action)))
        self.t += 1
        done = action[0] > 0.99  # _check_success()
        return self._obs(), float(done), bool(done), {}

    def close(self) -> None:
        self.closed = True
