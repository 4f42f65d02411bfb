"""Fake torch / gymnasium / mani_skill / mikasa_robo_suite, shaped like the real ones.

The fake ShellGameTouch/RememberColor env mimics MIKASA-Robo's observation under obs_mode="rgb"
with robot panda_wristcam and num_envs=1 (every tensor batched with a leading 1):

    obs = {"agent": {"qpos": (1, 9) f32, "qvel": (1, 9) f32},
           "extra": {"tcp_pose": (1, 7) f32},
           "sensor_param": {cam: {"extrinsic_cv": (1, 3, 4), "cam2world_gl": (1, 4, 4), "intrinsic_cv": (1, 3, 3)}},
           "sensor_data": {"base_camera": {"rgb": (1, 128, 128, 3) u8}, "hand_camera": {"rgb": (1, 128, 128, 3) u8}}}
    info = {"elapsed_steps": (1,) i32, "obj_to_goal_pos": (1, 3), "is_obj_placed": (1,) bool,
            "is_robot_static": (1,) bool, "success": (1,) bool, "prompt": None, "oracle_info": (1,) u8,
            "reward_dict": None}

The hidden fact (cup / colour index) is drawn from the episode RNG (seeded by reset(seed)), the
layout from the *global* torch RNG **without** ManiSkill's fork_rng — so only the adapter's own
torch seeding makes the first frame reproducible, which is what the tests check.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .common import Box, FakeTensor, module


class FakeTorch:
    """The torch module surface the adapter touches, with a global RNG like torch's."""

    def __init__(self) -> None:
        self.manual_seed_calls: list[int] = []
        self._rng = np.random.RandomState(12345)

    def manual_seed(self, seed: int) -> None:
        self.manual_seed_calls.append(int(seed))
        self._rng = np.random.RandomState(int(seed) % 2**32)

    def rand(self, *shape: int) -> FakeTensor:
        return FakeTensor(self._rng.random_sample(shape).astype(np.float32))

    def randperm(self, n: int) -> FakeTensor:
        return FakeTensor(self._rng.permutation(n))

    def from_numpy(self, array: np.ndarray) -> FakeTensor:
        assert isinstance(array, np.ndarray)
        return FakeTensor(array)

    def as_module(self) -> Any:
        return module("torch", manual_seed=self.manual_seed, rand=self.rand, randperm=self.randperm, from_numpy=self.from_numpy, Tensor=FakeTensor)


def _obs_space() -> dict[str, Any]:
    return {
        "agent": {"qpos": Box(-np.inf, np.inf, (9,)), "qvel": Box(-np.inf, np.inf, (9,))},
        "extra": {"tcp_pose": Box(-np.inf, np.inf, (7,))},
        "sensor_param": {},
        "sensor_data": {
            "base_camera": {"rgb": Box(0, 255, (128, 128, 3), np.uint8)},
            "hand_camera": {"rgb": Box(0, 255, (128, 128, 3), np.uint8)},
        },
    }


class FakeMikasaEnv:
    """ShellGameTouch-v0 / RememberColorN-v0 look-alike (num_envs=1)."""

    def __init__(self, env_id: str, torch: FakeTorch, max_episode_steps: int, **kwargs: Any) -> None:
        self.env_id = env_id
        self.kwargs = kwargs
        self.torch = torch
        self.max_episode_steps = max_episode_steps
        self.single_action_space = Box(-1.0, 1.0, (8,))
        self.action_space = self.single_action_space
        self.single_observation_space = _obs_space()
        self.prompt = None
        self.oracle_info = None
        self.elapsed = 0
        self.actions: list[Any] = []
        self.reset_log: list[dict[str, Any]] = []
        self.closed = False
        self.ncolors = int(env_id[len("RememberColor")]) if env_id.startswith("RememberColor") else 0

    @property
    def unwrapped(self) -> "FakeMikasaEnv":
        return self

    def _obs(self) -> dict[str, Any]:
        img = np.zeros((1, 128, 128, 3), np.uint8)
        x, y = (np.clip(self.layout * 127, 0, 127)).astype(int)
        img[0, x, y] = (255, 0, 0)  # where the layout put the object
        img[0, :, :, 2] = self.elapsed
        hand = np.full((1, 128, 128, 3), 7, np.uint8)
        return {
            "agent": {"qpos": FakeTensor(np.arange(9, dtype=np.float32)[None]), "qvel": FakeTensor(np.zeros((1, 9), np.float32))},
            "extra": {"tcp_pose": FakeTensor(np.full((1, 7), 0.5, np.float32))},
            "sensor_param": {
                "base_camera": {
                    "extrinsic_cv": FakeTensor(np.zeros((1, 3, 4), np.float32)),
                    "cam2world_gl": FakeTensor(np.eye(4, dtype=np.float32)[None]),
                    "intrinsic_cv": FakeTensor(np.eye(3, dtype=np.float32)[None]),
                }
            },
            "sensor_data": {"base_camera": {"rgb": FakeTensor(img)}, "hand_camera": {"rgb": FakeTensor(hand)}},
        }

    def _info(self, success: bool) -> dict[str, Any]:
        return {
            "elapsed_steps": FakeTensor(np.array([self.elapsed], np.int32)),
            "obj_to_goal_pos": FakeTensor(np.zeros((1, 3), np.float32)),
            "is_obj_placed": FakeTensor(np.array([success])),
            "is_robot_static": FakeTensor(np.array([True])),
            "success": FakeTensor(np.array([success])),
            "prompt": None,
            "oracle_info": self.oracle_info,
            "reward_dict": None,
        }

    def reset(self, seed: int | None = None, options: dict | None = None) -> tuple[dict, dict]:
        episode_rng = np.random.RandomState(seed)  # ManiSkill: _batched_episode_rng from the seed
        if self.ncolors:
            fact = episode_rng.choice(list(range(self.ncolors)))
            self.true_color_indices = FakeTensor(np.array([fact], np.uint8))
            self.oracle_info = self.true_color_indices
            self.torch.randperm(self.ncolors)  # the cube shuffle draws from the global torch RNG
        else:
            fact = episode_rng.choice([0, 1, 2])
            self.cup_with_ball_number = FakeTensor(np.array([fact], np.uint8))
            self.oracle_info = self.cup_with_ball_number
        self.layout = self.torch.rand(2).numpy()  # xyz[:, :2] = torch.rand((b, 2)) ... (global RNG)
        self.reset_log.append(
            {
                "seed": seed,
                "options": options,
                "torch_seeds": list(self.torch.manual_seed_calls),
                "np_state_head": np.random.get_state()[1][:4].copy(),
            }
        )
        self.elapsed = 0
        return self._obs(), self._info(False)

    def step(self, action: Any) -> tuple[Any, ...]:
        self.actions.append(action)
        self.elapsed += 1
        success = self.elapsed >= 5 and float(action.numpy()[0, 0]) > 0.9
        reward = FakeTensor(np.array([1.0 if success else 0.25], np.float32))
        terminated = FakeTensor(np.array([success]))
        truncated = FakeTensor(np.array([self.elapsed >= self.max_episode_steps]))
        return self._obs(), reward, terminated, truncated, self._info(success)

    def close(self) -> None:
        self.closed = True


class StateOnlyTensorToDictWrapper:
    """As mikasa_robo_suite/utils/wrappers.py: copies prompt and oracle_info INTO the observation."""

    def __init__(self, env: Any) -> None:
        self.env = env

    @property
    def unwrapped(self) -> Any:
        return self.env.unwrapped

    @property
    def action_space(self) -> Any:
        return self.env.action_space

    def observation(self, obs: dict) -> dict:
        obs = dict(obs)
        b_ = obs["agent"]["qpos"].shape[0]
        prompt_ = self.unwrapped.prompt
        oracle_ = self.unwrapped.oracle_info
        obs["prompt"] = FakeTensor(np.ones((b_, 1)) * 4242424242) if prompt_ is None else prompt_
        obs["oracle_info"] = FakeTensor(np.ones((b_, 1)) * 4242424242) if oracle_ is None else FakeTensor(oracle_.numpy()[:, None])
        return obs

    def reset(self, **kwargs: Any) -> tuple[dict, dict]:
        obs, info = self.env.reset(**kwargs)
        return self.observation(obs), info

    def step(self, action: Any) -> tuple[Any, ...]:
        obs, *rest = self.env.step(action)
        return (self.observation(obs), *rest)

    def close(self) -> None:
        self.env.close()


REGISTRY = {"ShellGameTouch-v0": 90, "RememberColor3-v0": 60, "RememberColor5-v0": 60, "RememberColor9-v0": 60}


class FakeGym:
    def __init__(self, torch: FakeTorch) -> None:
        self.torch = torch
        self.make_calls: list[tuple[str, dict[str, Any]]] = []
        self.envs: list[FakeMikasaEnv] = []

    def make(self, env_id: str, **kwargs: Any) -> FakeMikasaEnv:
        if env_id not in REGISTRY:
            raise KeyError(f"Environment {env_id} doesn't exist")  # gymnasium raises NameNotFound
        self.make_calls.append((env_id, dict(kwargs)))
        env = FakeMikasaEnv(env_id, self.torch, REGISTRY[env_id], **kwargs)
        self.envs.append(env)
        return env


def modules() -> tuple[dict[str, Any], FakeTorch, FakeGym]:
    torch = FakeTorch()
    gym = FakeGym(torch)
    mikasa = module("mikasa_robo_suite")
    utils = module("mikasa_robo_suite.utils")
    wrappers = module("mikasa_robo_suite.utils.wrappers", StateOnlyTensorToDictWrapper=StateOnlyTensorToDictWrapper)
    mods = {
        "torch": torch.as_module(),
        "gymnasium": module("gymnasium", make=gym.make),
        "mani_skill": module("mani_skill"),
        "mikasa_robo_suite": mikasa,
        "mikasa_robo_suite.utils": utils,
        "mikasa_robo_suite.utils.wrappers": wrappers,
    }
    return mods, torch, gym
