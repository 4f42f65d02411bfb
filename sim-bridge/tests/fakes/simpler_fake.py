"""Fake simpler_env with the real `make` (including its shared-dict mutation) and ManiSkill2 obs.

`make` below is simpler_env/__init__.py's `make` verbatim in behaviour: it takes
`env_kwargs` *from* ENVIRONMENT_MAP and writes into it, so kwargs leak across calls unless the
caller restores the map. ManiSkill2_real2sim observations under obs_mode="rgbd":

    obs = {"agent": {"qpos", "qvel", "controller", "base_pose"}, "extra": {"tcp_pose"},
           "camera_param": {cam: {...}},
           "image": {cam: {"rgb": (H, W, 3) u8, "depth": (H, W, 1) f32, "Segmentation": (H, W, 4) u32}}}

with cam = overhead_camera (640×512) for google_robot, 3rd_view_camera (640×480) for widowx.

The action space is the real one for both robots' prepackaged controller (ManiSkill2_real2sim
agents/controllers/pd_ee_pose.py `PDEEPoseController._initialize_action_space` with
agents/configs/{widowx,google_robot}/defaults.py: position ±1, rot_bound π/2, normalize_action=False
for the arm; the gripper normalized to [-1, 1]): Box(ACTION_LOW, ACTION_HIGH), float32.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from .common import Box, module

ENVIRONMENTS = [
    "google_robot_pick_coke_can",
    "widowx_spoon_on_towel",
    "widowx_carrot_on_plate",
    "widowx_stack_cube",
    "widowx_put_eggplant_in_basket",
]
INSTRUCTIONS = {
    "GraspSingleOpenedCokeCanInScene-v0": "pick coke can",
    "PutSpoonOnTableClothInScene-v0": "put the spoon on the towel",
    "PutCarrotOnPlateInScene-v0": "put carrot on plate",
    "StackGreenCubeOnYellowCubeBakedTexInScene-v0": "stack the green block on the yellow block",
    "PutEggplantInBasketScene-v0": "put eggplant into yellow basket",
}
ACTION_LOW = np.float32(np.hstack([np.broadcast_to(-1.0, 3), np.broadcast_to(-np.pi / 2, 3), [-1.0]]))
ACTION_HIGH = np.float32(np.hstack([np.broadcast_to(1.0, 3), np.broadcast_to(np.pi / 2, 3), [1.0]]))
MAX_STEPS = {
    "GraspSingleOpenedCokeCanInScene-v0": 80,
    "PutSpoonOnTableClothInScene-v0": 60,
    "PutCarrotOnPlateInScene-v0": 60,
    "StackGreenCubeOnYellowCubeBakedTexInScene-v0": 60,
    "PutEggplantInBasketScene-v0": 120,
}


def fresh_environment_map() -> dict[str, tuple[str, dict[str, Any]]]:
    return {
        "google_robot_pick_coke_can": ("GraspSingleOpenedCokeCanInScene-v0", {}),
        "widowx_spoon_on_towel": ("PutSpoonOnTableClothInScene-v0", {}),
        "widowx_carrot_on_plate": ("PutCarrotOnPlateInScene-v0", {}),
        "widowx_stack_cube": ("StackGreenCubeOnYellowCubeBakedTexInScene-v0", {}),
        "widowx_put_eggplant_in_basket": ("PutEggplantInBasketScene-v0", {}),
    }


class _Spec:
    def __init__(self, max_episode_steps: int) -> None:
        self.max_episode_steps = max_episode_steps


class FakeRealToSimEnv:
    def __init__(self, env_name: str, **kwargs: Any) -> None:
        self.env_name = env_name
        self.kwargs = kwargs
        self.robot_uid = "google_robot_static" if env_name.startswith("Grasp") else "widowx"
        self.camera = "overhead_camera" if self.robot_uid.startswith("google_robot") else "3rd_view_camera"
        self.hw = (512, 640) if self.camera == "overhead_camera" else (480, 640)
        self.action_space = Box(ACTION_LOW, ACTION_HIGH, (7,))
        self.spec = _Spec(MAX_STEPS[env_name])
        self.elapsed = 0
        self.resets: list[dict[str, Any]] = []
        self.actions: list[np.ndarray] = []
        self.closed = False

    def _obs(self) -> dict[str, Any]:
        h, w = self.hw
        rgb = np.zeros((h, w, 3), np.uint8)
        rgb[self.episode_id % h, :, 0] = 200
        rgb[:, :, 1] = self.elapsed
        return {
            "agent": {
                "qpos": np.zeros(11, np.float32),
                "qvel": np.zeros(11, np.float32),
                "controller": {"gripper": {"target_qpos": np.zeros(2, np.float32)}},
                "base_pose": np.zeros(7, np.float32),
            },
            "extra": {"tcp_pose": np.zeros(7, np.float32)},
            "camera_param": {self.camera: {"extrinsic_cv": np.zeros((4, 4), np.float32), "intrinsic_cv": np.eye(3, dtype=np.float32)}},
            "image": {
                self.camera: {
                    "rgb": rgb,
                    "depth": np.zeros((h, w, 1), np.float32),
                    "Segmentation": np.zeros((h, w, 4), np.uint32),
                }
            },
        }

    def reset(self, seed: int | None = None, options: dict | None = None) -> tuple[dict, dict]:
        options = dict(options or {})
        rng = np.random.RandomState(seed)
        obj = dict(options.get("obj_init_options", {}))
        self.episode_id = int(obj.get("episode_id", rng.randint(24)))
        self.resets.append({"seed": seed, "options": options})
        self.elapsed = 0
        return self._obs(), {"episode_id": self.episode_id, "elapsed_steps": 0}

    def get_language_instruction(self, **kwargs: Any) -> str:
        return INSTRUCTIONS[self.env_name]

    def step(self, action: np.ndarray) -> tuple[Any, ...]:
        self.actions.append(np.array(action))
        self.elapsed += 1
        success = bool(action[6] > 0.5)
        truncated = self.elapsed >= self.spec.max_episode_steps
        info = {"elapsed_steps": self.elapsed, "episode_stats": {"moved_correct_obj": success, "is_src_obj_grasped": np.bool_(False)}}
        return self._obs(), 0.0, success, truncated, info

    def close(self) -> None:
        self.closed = True


class FakeSimplerWorld:
    def __init__(self) -> None:
        self.ENVIRONMENT_MAP = fresh_environment_map()
        self.made: list[FakeRealToSimEnv] = []

    def gym_make(self, env_name: str, **kwargs: Any) -> FakeRealToSimEnv:
        env = FakeRealToSimEnv(env_name, **kwargs)
        self.made.append(env)
        return env

    def make(self, task_name: str, **kwargs: Any) -> FakeRealToSimEnv:
        """simpler_env/__init__.py make(), same statements."""
        assert task_name in ENVIRONMENTS, f"Task {task_name} is not supported. Environments: \n {ENVIRONMENTS}"
        env_name, env_kwargs = self.ENVIRONMENT_MAP[task_name]

        env_kwargs["obs_mode"] = ("rgbd",)  # sic: the real code has a trailing comma
        env_kwargs["prepackaged_config"] = True

        for key, value in kwargs.items():
            if key in env_kwargs:
                # upstream's make() warns without a stacklevel (B028), and the fake keeps its statements
                warnings.warn(f"default value [{env_kwargs[key]}] for Key {key} changes to value [{value}]")  # noqa: B028 - as upstream
            env_kwargs[key] = value

        return self.gym_make(env_name, **env_kwargs)


def get_image_from_maniskill2_obs_dict(env: Any, obs: dict, camera_name: str | None = None) -> np.ndarray:
    """simpler_env/utils/env/observation_utils.py, same logic."""
    if camera_name is None:
        if "google_robot" in env.robot_uid:
            camera_name = "overhead_camera"
        elif "widowx" in env.robot_uid:
            camera_name = "3rd_view_camera"
        else:
            raise NotImplementedError()
    return obs["image"][camera_name]["rgb"]


def modules() -> tuple[dict[str, Any], FakeSimplerWorld]:
    world = FakeSimplerWorld()
    mods = {
        "simpler_env": module("simpler_env", ENVIRONMENTS=ENVIRONMENTS, ENVIRONMENT_MAP=world.ENVIRONMENT_MAP, make=world.make),
        "simpler_env.utils": module("simpler_env.utils"),
        "simpler_env.utils.env": module("simpler_env.utils.env"),
        "simpler_env.utils.env.observation_utils": module(
            "simpler_env.utils.env.observation_utils", get_image_from_maniskill2_obs_dict=get_image_from_maniskill2_obs_dict
        ),
        "mani_skill2_real2sim": module("mani_skill2_real2sim"),
    }
    return mods, world
