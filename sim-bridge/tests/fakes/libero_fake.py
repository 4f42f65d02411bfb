"""Fake LIBERO (libero.libero, .benchmark, .envs) built lazily at import time.

Observations are robosuite's (camera_heights = camera_widths = 256), images stored upside down
and mirrored as robosuite renders them (hence openpi's 180° rotation):

    agentview_image (256, 256, 3) u8, robot0_eye_in_hand_image (256, 256, 3) u8,
    robot0_eef_pos (3,) f64, robot0_eef_quat (4,) f64 (x, y, z, w), robot0_gripper_qpos (2,) f64,
    robot0_joint_pos (7,) f64, robot0_joint_pos_cos/sin (7,), robot0_joint_vel (7,),
    robot0_gripper_qvel (2,), <object>_pos (3,), <object>_quat (4,)
"""

from __future__ import annotations

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
        self.envs: list["FakeOffScreenRenderEnv"] = []

    # ---- libero.libero.benchmark
    def get_benchmark_dict(self, help: bool = False) -> dict[str, Any]:
        world = self

        class LIBERO_SPATIAL:
            def __init__(self, task_order_index: int = 0) -> None:
                self.name = "libero_spatial"
                self.task_order_index = task_order_index
                self.tasks = [
                    Task(n, n.replace("_", " "), "Libero", "libero_spatial", f"{n}.bddl", f"{n}.pruned_init")
                    for n in TASK_NAMES
                ]
                self.n_tasks = len(self.tasks)

            def get_task(self, i: int) -> Task:
                return self.tasks[i]

            def get_task_init_states(self, i: int) -> np.ndarray:
                # torch.load(...pruned_init) → an array of flattened MuJoCo states, 50 per task
                states = np.zeros((50, 79), np.float64)
                states[:, 0] = np.arange(50) + 100 * i
                return states

        world.benchmark_cls = LIBERO_SPATIAL
        return {"libero_spatial": LIBERO_SPATIAL}

    # ---- libero.libero
    @staticmethod
    def get_libero_path(query_key: str) -> str:
        return {"bddl_files": "/fake/libero/bddl_files", "init_states": "/fake/libero/init_files"}[query_key]

    def offscreen_env(self, **kwargs: Any) -> "FakeOffScreenRenderEnv":
        env = FakeOffScreenRenderEnv(**kwargs)
        self.envs.append(env)
        return env

    def factories(self) -> dict[str, Any]:
        return {
            "libero": lambda: {},
            "libero.libero": lambda: {"get_libero_path": self.get_libero_path},
            "libero.libero.benchmark": lambda: {"get_benchmark_dict": self.get_benchmark_dict},
            "libero.libero.envs": lambda: {"OffScreenRenderEnv": self.offscreen_env},
        }


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
            "akita_black_bowl_1_pos": np.zeros(3),
            "akita_black_bowl_1_quat": np.array([0.0, 0.0, 0.0, 1.0]),
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
