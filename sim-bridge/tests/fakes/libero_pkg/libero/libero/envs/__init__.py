"""Fake `libero.libero.envs.OffScreenRenderEnv` (tests only; see ../../../README.md for its physics)."""

import re

import numpy as np

DRAWERS = {"top": 1, "middle": 2, "bottom": 3}  # index into the flattened state [t, q_top, q_middle, q_bottom]
GAIN = 0.03
OPEN = 0.1
_GOAL = re.compile(r"\(:goal\s*\(And\s*\(Open wooden_cabinet_1_(top|middle|bottom)_region\)\s*\)\s*\)")


class OffScreenRenderEnv:
    def __init__(self, **kwargs):
        kwargs["has_renderer"] = False
        kwargs["has_offscreen_renderer"] = True
        self.bddl_file_name = kwargs["bddl_file_name"]
        with open(self.bddl_file_name, encoding="utf-8") as f:
            m = _GOAL.search(f.read())
        assert m is not None, f"[fake] no drawer-opening goal in {self.bddl_file_name}"
        self.goal = DRAWERS[m.group(1)]
        self.h = kwargs.get("camera_heights", 128)
        self.w = kwargs.get("camera_widths", 128)
        self.state = np.zeros(4)
        self.closed = False

    def _obs(self):
        return {
            "agentview_image": np.zeros((self.h, self.w, 3), np.uint8),
            "robot0_eye_in_hand_image": np.zeros((self.h, self.w, 3), np.uint8),
            "robot0_eef_pos": np.zeros(3),
            "robot0_eef_quat": np.array([0.0, 0.0, 0.0, 1.0]),
            "robot0_gripper_qpos": np.zeros(2),
        }

    def seed(self, seed):
        np.random.seed(seed)

    def reset(self):
        self.state = np.zeros(4)
        return self._obs()

    def set_init_state(self, init_state):
        self.state = np.array(init_state, dtype=np.float64)
        return self._obs()

    def get_sim_state(self):
        return self.state.copy()

    def check_success(self):
        return bool(self.state[self.goal] > OPEN)

    def step(self, action):
        assert isinstance(action, list) and len(action) == 7, "LIBERO steps take a list of 7 floats"
        self.state[0] += 1
        self.state[1:4] += GAIN * np.asarray(action[:3], dtype=np.float64)
        done = self.check_success()
        return self._obs(), float(done), done, {}

    def close(self):
        self.closed = True
