"""Fake torch / gymnasium / mani_skill / mikasa_robo_suite, shaped by what the real ones returned.

The observation's structure (every leaf's key path, shape and dtype), the info keys, the registered time
limits and the phase constants come from tests/fixtures/mikasa/*.json, recorded from mikasa-robo-suite 1.0.0 on
mani_skill 3.0.0b15 (tests/fixtures/record_mikasa.py). ShellGame*-v0 could not be recorded (its YCB asset is on
no registry): its fake uses RememberColor3-VLA-v0's rgb structure and MIKASA's registered limits (90 steps,
asset "ycb").

Module layout as in 1.0.0: `import mikasa_robo_suite` registers nothing; `mikasa_robo_suite.rl.memory_envs`
(*-v0) and `mikasa_robo_suite.vla.memory_envs` (*-VLA-v0) do; ManiSkill's registry is
`mani_skill.utils.registration.REGISTERED_ENVS` and its assets `mani_skill.utils.assets`.

Dynamics (RememberColor): the colour is drawn from a RandomState(seed) (ManiSkill's episode RNG), the phase
lengths and the layout from the *global* torch RNG (the fake has no fork_rng, so only the adapter's own torch
seeding makes them reproducible — the worst case the adapter defends against). Cue phase: the target cube at
the centre, the others lifted to z = 1000; empty phase: all lifted; then the candidates on the table (VLA) or,
as the real legacy *-v0 does, still lifted. With control_mode pd_ee_delta_pos the tool centre point moves by
action[:3] × 0.1 m; success = the candidates are out, the tool is within 0.05 m of the target cube and the
action is small (static). Other control modes keep the old rule: action[0] > 0.9 from step 5 on.
"""

from __future__ import annotations

import json
import types
from pathlib import Path
from typing import Any

import numpy as np

from .common import Box, FakeTensor, module

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "mikasa"
HIDDEN = 1000.0


def fixture(task: str, obs_mode: str) -> dict[str, Any]:
    """The recording for (task, obs_mode), else RememberColor3-VLA-v0's for that mode (ShellGame, 5/9 colours)."""
    mode = "state_dict" if obs_mode in ("state", "state_dict") else "rgb"
    path = FIXTURES / f"{task}.{mode}.json"
    if not path.is_file():
        path = FIXTURES / f"RememberColor3-VLA-v0.{mode}.json"
    return json.loads(path.read_text())


def _task_facts(task: str) -> dict[str, Any]:
    colours = int(task[len("RememberColor")]) if task.startswith("RememberColor") else 0
    vla = "VLA" in task
    if colours:
        rec = fixture("RememberColor3-VLA-v0" if vla else "RememberColor3-v0", "state_dict")
        return {
            "colours": colours,
            "vla": vla,
            "max_steps": rec["max_episode_steps"],
            "constants": {**rec["constants"], "COLORS": colours},
            "assets": [],
        }
    return {"colours": 0, "vla": False, "max_steps": 90, "constants": {"TIME_OFFSET": 5}, "assets": ["ycb"]}


TASKS = [f"RememberColor{n}-{s}" for n in (3, 5, 9) for s in ("VLA-v0", "v0")] + [f"ShellGame{k}-v0" for k in ("Touch", "Push", "Pick")]


class FakeTorch:
    """The torch module surface the adapter touches, with a global RNG like torch's and no CUDA."""

    def __init__(self) -> None:
        self.manual_seed_calls: list[int] = []
        self._rng = np.random.RandomState(12345)
        self.synchronize_calls = 0
        self.cuda = types.SimpleNamespace(is_available=lambda: False, synchronize=self._synchronize)

    def _synchronize(self) -> None:
        raise AssertionError("Torch not compiled with CUDA enabled")  # what a CPU build of torch raises

    def manual_seed(self, seed: int) -> None:
        self.manual_seed_calls.append(int(seed))
        self._rng = np.random.RandomState(int(seed) % 2**32)

    def rand(self, *shape: int) -> FakeTensor:
        return FakeTensor(self._rng.random_sample(shape).astype(np.float32))

    def randint(self, low: int, high: int) -> int:
        return int(self._rng.randint(low, high))

    def randperm(self, n: int) -> FakeTensor:
        return FakeTensor(self._rng.permutation(n))

    def from_numpy(self, array: np.ndarray) -> FakeTensor:
        assert isinstance(array, np.ndarray)
        return FakeTensor(array)

    def as_module(self) -> Any:
        return module(
            "torch",
            manual_seed=self.manual_seed,
            rand=self.rand,
            randperm=self.randperm,
            from_numpy=self.from_numpy,
            Tensor=FakeTensor,
            cuda=self.cuda,
        )


def _space(structure: dict[str, list[Any]]) -> dict[str, Any]:
    """A nested dict of Boxes (batch dimension dropped: single_observation_space) from a recorded structure."""
    out: dict[str, Any] = {}
    for path, (shape, dtype) in structure.items():
        *parents, leaf = path.split("/")
        node = out
        for p in parents:
            node = node.setdefault(p, {})
        node[leaf] = Box(0, 255, tuple(shape[1:]), np.uint8) if dtype == "uint8" else Box(-np.inf, np.inf, tuple(shape[1:]), np.dtype(dtype))
    return out


class FakeCube:
    def __init__(self) -> None:
        self.p = np.zeros(3, np.float32)

    @property
    def pose(self) -> Any:
        return types.SimpleNamespace(p=FakeTensor(self.p[None].copy()))


class FakeMikasaEnv:
    """RememberColor / ShellGame look-alike (num_envs=1)."""

    def __init__(self, task: str, torch: FakeTorch, **kwargs: Any) -> None:
        self.env_id = task
        self.kwargs = kwargs
        self.torch = torch
        facts = _task_facts(task)
        self.colours, self.vla, self.max_episode_steps = facts["colours"], facts["vla"], facts["max_steps"]
        for name, value in facts["constants"].items():
            setattr(self, name, value)
        rec = fixture(task, kwargs.get("obs_mode", "rgb"))
        self.structure = {k: v for k, v in rec["observation"].items() if not k.startswith("extra/goal_")}
        if kwargs.get("obs_mode") in ("state", "state_dict"):
            self.structure.update({f"extra/goal_{k}_pose": [[1, 3], "float32"] for k in range(self.colours)})
        self.info_keys = rec["info_keys"]
        self.ee = kwargs.get("control_mode") == "pd_ee_delta_pos"
        act = (4,) if self.ee else (8,)
        self.single_action_space = self.action_space = Box(-1.0, 1.0, act)
        self.single_observation_space = _space(self.structure)
        self.cubes = {k: FakeCube() for k in range(self.colours)}
        self.task_cue = None
        self.oracle_info: Any = None
        self.elapsed = 0
        self.tcp = np.array([0.0, 0.0, 0.3])
        self.actions: list[Any] = []
        self.reset_log: list[dict[str, Any]] = []
        self.closed = False

    @property
    def unwrapped(self) -> FakeMikasaEnv:
        return self

    def _phase(self) -> str:
        if not self.colours:
            return "cue" if self.elapsed < self.TIME_OFFSET else "manip"
        cue = self.cue_steps if self.vla else self.TIME_OFFSET
        empty = self.empty_steps if self.vla else self.DELTA_TIME
        if self.elapsed < cue:
            return "cue"
        if self.elapsed < cue + empty or not self.vla:  # legacy *-v0 never puts the cubes back (as recorded)
            return "empty"
        return "manip"

    def _place_cubes(self) -> None:
        phase, target = self._phase(), self.fact
        for k, cube in self.cubes.items():
            x, y = self.layout[k]
            if phase == "cue" and k == target:
                cube.p = np.array([0.0, 0.0, 0.02], np.float32)
            else:
                cube.p = np.array([x, y, 0.02 if phase == "manip" else HIDDEN], np.float32)

    def _leaf(self, path: str, shape: list[int], dtype: str) -> FakeTensor:
        if path == "agent/qpos":
            return FakeTensor(np.arange(9, dtype=np.float32)[None])
        if path == "extra/tcp_pose":
            return FakeTensor(np.array([[*self.tcp, 1.0, 0.0, 0.0, 0.0]], np.float32))
        if path == "extra/oracle_info":
            return FakeTensor(np.array([self.fact], np.uint8))
        if path.startswith("extra/goal_"):
            k = int(path.split("_")[1])
            return FakeTensor((self.cubes[k].p * (k == self.fact))[None].astype(np.float32))
        if path == "sensor_data/base_camera/rgb":
            img = np.zeros(shape, np.uint8)
            x, y = (np.clip(self.layout[0] * 127 + 64, 0, 127)).astype(int) if self.colours else (np.clip(self.layout[0] * 127, 0, 127)).astype(int)
            img[0, x, y] = (255, 0, 0)  # where the layout put the object
            img[0, :, :, 2] = self.elapsed
            return FakeTensor(img)
        if path == "sensor_data/hand_camera/rgb":
            return FakeTensor(np.full(shape, 7, np.uint8))
        return FakeTensor(np.zeros(shape, np.dtype(dtype)))

    def _obs(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for path, (shape, dtype) in self.structure.items():
            *parents, leaf = path.split("/")
            node = out
            for p in parents:
                node = node.setdefault(p, {})
            node[leaf] = self._leaf(path, shape, dtype)
        return out

    def _info(self, success: bool) -> dict[str, Any]:
        known = {
            "elapsed_steps": FakeTensor(np.array([self.elapsed], np.int32)),
            "success": FakeTensor(np.array([success])),
            "is_obj_placed": FakeTensor(np.array([success])),
            "is_robot_static": FakeTensor(np.array([True])),
            "oracle_info": FakeTensor(np.array([self.fact], np.uint8)),
            "obj_to_goal_pos": FakeTensor(np.zeros((1, 3), np.float32)),
        }
        return {k: known.get(k) for k in self.info_keys}

    def reset(self, seed: int | None = None, options: dict | None = None) -> tuple[dict, dict]:
        episode_rng = np.random.RandomState(seed)  # ManiSkill: _batched_episode_rng from the seed
        self.fact = int(episode_rng.choice(list(range(self.colours or 3))))
        if self.colours:
            self.true_color_indices = FakeTensor(np.array([self.fact], np.uint8))
        else:
            self.cup_with_ball_number = FakeTensor(np.array([self.fact], np.uint8))
        self.oracle_info = FakeTensor(np.array([self.fact], np.uint8))
        if self.vla:
            lo_c, hi_c = self.CUE_PHASE_STEPS
            lo_e, hi_e = self.EMPTY_PHASE_STEPS
            self.cue_steps, self.empty_steps = self.torch.randint(lo_c, hi_c + 1), self.torch.randint(lo_e, hi_e + 1)
        n = max(self.colours, 1)
        ys = (np.arange(n) - n // 2) * 0.2
        order = self.torch.randperm(n).numpy()
        jitter = self.torch.rand(n, 2).numpy() * 0.02 - 0.01
        self.layout = np.stack([jitter[:, 0], ys[order] + jitter[:, 1]], axis=1)
        self.reset_log.append(
            {
                "seed": seed,
                "options": options,
                "torch_seeds": list(self.torch.manual_seed_calls),
                "np_state_head": np.random.get_state()[1][:4].copy(),
            }
        )
        self.elapsed = 0
        self.tcp = np.array([0.0, 0.0, 0.3])
        self._place_cubes()
        return self._obs(), {**self._info(False), "reconfigure": False}

    def _success(self, a: np.ndarray) -> bool:
        if not self.ee:
            return self.elapsed >= 5 and float(a[0]) > 0.9
        if self._phase() != "manip" or not self.colours:
            return False
        near = float(np.linalg.norm(self.cubes[self.fact].p - self.tcp)) <= 0.05
        return near and float(np.abs(a[:3]).max()) < 0.2

    def step(self, action: Any) -> tuple[Any, ...]:
        self.actions.append(action)
        a = action.numpy()[0]
        if self.ee:
            self.tcp = self.tcp + np.clip(a[:3], -1, 1) * 0.1
        self.elapsed += 1
        if self.colours:
            self._place_cubes()
        success = self._success(a)
        reward = FakeTensor(np.array([1.0 if success else 0.25], np.float32))
        terminated = FakeTensor(np.array([success]))
        truncated = FakeTensor(np.array([self.elapsed >= self.max_episode_steps]))
        return self._obs(), reward, terminated, truncated, self._info(success)

    def close(self) -> None:
        self.closed = True


class FakeGym:
    def __init__(self, torch: FakeTorch) -> None:
        self.torch = torch
        self.make_calls: list[tuple[str, dict[str, Any]]] = []
        self.envs: list[FakeMikasaEnv] = []

    def make(self, env_id: str, **kwargs: Any) -> FakeMikasaEnv:
        if env_id not in TASKS:
            raise KeyError(f"Environment {env_id} doesn't exist")  # gymnasium raises NameNotFound
        if kwargs.get("render_backend") == "cpu":  # SAPIEN 3.0.3 on lavapipe (mikasa_runtime.py)
            raise RuntimeError('failed to create renderer on device "cpu": current SAPIEN version only supports single-GPU rendering.')
        self.make_calls.append((env_id, dict(kwargs)))
        env = FakeMikasaEnv(env_id, self.torch, **kwargs)
        self.envs.append(env)
        return env


class FakeAssets:
    def __init__(self) -> None:
        self.downloaded: set[str] = set()
        self.DATA_GROUPS: dict[str, list[str]] = {}
        self.DATA_SOURCES = {
            "ycb": types.SimpleNamespace(
                output_dir="/nonexistent/.maniskill/data",
                target_path="assets/mani_skill2_ycb",
                url="https://huggingface.co/datasets/haosulab/ManiSkill2/resolve/main/data/mani_skill2_ycb.zip",
            )
        }

    def as_module(self) -> Any:
        return module(
            "mani_skill.utils.assets",
            DATA_GROUPS=self.DATA_GROUPS,
            DATA_SOURCES=self.DATA_SOURCES,
            is_data_source_downloaded=lambda i: i in self.downloaded,
            expand_data_group_into_individual_data_source_ids=lambda g: self.DATA_GROUPS[g],
        )


def modules() -> tuple[dict[str, Any], FakeTorch, FakeGym]:
    torch = FakeTorch()
    gym = FakeGym(torch)
    registered = {t: types.SimpleNamespace(max_episode_steps=_task_facts(t)["max_steps"], asset_download_ids=_task_facts(t)["assets"]) for t in TASKS}
    assets = FakeAssets()
    gym.assets = assets  # type: ignore[attr-defined]
    mods = {
        "torch": torch.as_module(),
        "gymnasium": module("gymnasium", make=gym.make),
        "mani_skill": module("mani_skill"),
        "mani_skill.utils": module("mani_skill.utils"),
        "mani_skill.utils.registration": module("mani_skill.utils.registration", REGISTERED_ENVS=registered),
        "mani_skill.utils.assets": assets.as_module(),
        "mikasa_robo_suite": module("mikasa_robo_suite"),
        "mikasa_robo_suite.rl": module("mikasa_robo_suite.rl"),
        "mikasa_robo_suite.rl.memory_envs": module("mikasa_robo_suite.rl.memory_envs"),
        "mikasa_robo_suite.vla": module("mikasa_robo_suite.vla"),
        "mikasa_robo_suite.vla.memory_envs": module("mikasa_robo_suite.vla.memory_envs"),
    }
    return mods, torch, gym
