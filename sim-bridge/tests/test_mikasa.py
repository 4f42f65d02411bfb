from __future__ import annotations

import numpy as np
import pytest

from fakes import mikasa_fake
from fakes.common import Box, install
from imep_sim_bridge.adapters.mikasa import MikasaAdapter, translate
from imep_sim_bridge.errors import AdapterError, SimUnavailable
from imep_sim_bridge.spec import FieldSpec, first_frame_hash, split


@pytest.fixture
def world(monkeypatch):
    mods, torch, gym = mikasa_fake.modules()
    install(monkeypatch, mods)
    gym.assets.downloaded.add("ycb")  # as if the user had put ShellGame's YCB asset in place
    return torch, gym


def test_make_uses_mikasas_own_kwargs_without_the_state_wrapper(world) -> None:
    torch, gym = world
    env = MikasaAdapter().make("mikasa/ShellGameTouch-v0", {})
    ((env_id, kwargs),) = gym.make_calls
    assert env_id == "ShellGameTouch-v0"
    assert kwargs == {
        "num_envs": 1,
        "obs_mode": "rgb",
        "control_mode": "pd_joint_delta_pos",
        "render_mode": "all",
        "sim_backend": "gpu",
        "reward_mode": "normalized_dense",
        "reconfiguration_freq": 1,
    }
    assert type(env._env).__name__ == "FakeMikasaEnv"  # StateOnlyTensorToDictWrapper only adds task_cue/oracle_info
    spec = env.spec()
    assert spec.max_steps == 90  # ManiSkill's registry, not a table in the adapter
    assert spec.action.shape == (8,) and spec.action.dtype == "float32"
    assert (spec.action.low, spec.action.high) == (-1.0, 1.0)
    assert spec.method_visible == ("image", "joints", "wrist_image", "camera_intrinsic", "camera_extrinsic")
    assert spec.observation["image"].shape == (128, 128, 3)
    assert spec.observation["camera_extrinsic"] == FieldSpec((3, 4), "float32")
    assert spec.observation["joints"].shape == (25,)
    for hidden in ("oracle_info", "oracle_cup", "success", "reward", "seed"):
        assert hidden in spec.evaluator_only
    assert spec.to_wire()["fact"] == {"field": "oracle_cup", "domain": [0, 1, 2]}
    assert spec.to_wire()["decisionFromStep"] == 5  # ShellGame's TIME_OFFSET


def test_user_kwargs_override_and_num_envs_is_one(world) -> None:
    torch, gym = world
    MikasaAdapter().make("mikasa/RememberColor9-v0", {"sim_backend": "cpu", "reward_mode": "sparse", "ignore_terminations": False})
    ((_, kwargs),) = gym.make_calls
    assert kwargs["sim_backend"] == "cpu" and kwargs["reward_mode"] == "sparse"
    assert kwargs["render_backend"] == "sapien-default"  # CPU sim: SAPIEN's own Vulkan device, not Device("cpu")
    assert "ignore_terminations" not in kwargs
    with pytest.raises(AdapterError, match="num_envs must be 1"):
        MikasaAdapter().make("mikasa/RememberColor9-v0", {"num_envs": 4})
    with pytest.raises(AdapterError, match="obs_mode must include rgb"):
        MikasaAdapter().make("mikasa/RememberColor9-v0", {"obs_mode": "depth"})
    with pytest.raises(AdapterError, match="no visible state field carries the task's cue"):
        MikasaAdapter().make("mikasa/ShellGameTouch-v0", {"obs_mode": "state"})
    with pytest.raises(AdapterError, match=r"unknown MIKASA-Robo env 'mikasa/RememberColor4-v0' \(known: "):
        MikasaAdapter().make("mikasa/RememberColor4-v0", {})


def test_a_render_device_failure_is_one_line(world) -> None:
    with pytest.raises(AdapterError) as info:
        MikasaAdapter().make("mikasa/RememberColor3-VLA-v0", {"render_backend": "cpu"})
    msg = info.value.message
    assert msg.startswith("mikasa/RememberColor3-VLA-v0: SAPIEN found no Vulkan device it can render with (failed to create renderer")
    assert "bash scripts/setup-sims.sh mikasa" in msg and "\n" not in msg


def test_cpu_torch_makes_cuda_synchronize_a_no_op(world) -> None:
    torch, gym = world
    import torch as fake_torch  # the fake module installed by the fixture

    with pytest.raises(AssertionError, match="not compiled with CUDA"):
        fake_torch.cuda.synchronize()
    MikasaAdapter().make("mikasa/RememberColor3-VLA-v0", {"sim_backend": "cpu"})
    assert fake_torch.cuda.synchronize() is None


def test_shellgame_without_its_asset_is_refused_before_maniskill_can_prompt(world) -> None:
    torch, gym = world
    gym.assets.downloaded.discard("ycb")
    with pytest.raises(AdapterError) as info:
        MikasaAdapter().make("mikasa/ShellGamePush-v0", {})
    assert info.value.message == (
        "mikasa/ShellGamePush-v0: needs ManiSkill asset(s) ycb at /nonexistent/.maniskill/data/assets/mani_skill2_ycb, "
        "which are not there and are on no package registry (ManiSkill downloads them from "
        "https://huggingface.co/datasets/haosulab/ManiSkill2/resolve/main/data/mani_skill2_ycb.zip); "
        "put them there (MS_ASSET_DIR) or use RememberColor"
    )
    assert gym.make_calls == []  # gym.make (whose EnvSpec.make would ask on stdin) never ran
    gym.assets.downloaded.add("ycb")
    assert MikasaAdapter().make("mikasa/ShellGamePush-v0", {}).spec().max_steps == 90


def test_numpy_and_torch_are_seeded_per_reset_with_the_episode_seed(world) -> None:
    torch, gym = world
    env = MikasaAdapter().make("mikasa/ShellGameTouch-v0", {})
    base = gym.envs[0]
    hashes = {}
    for seed in (3, 8, 3):
        raw = env.reset(seed, {}, None)
        log = base.reset_log[-1]
        assert log["seed"] == seed  # env.reset(seed=seed)
        assert log["torch_seeds"][-1] == seed  # torch.manual_seed(seed) before env.reset
        assert np.array_equal(log["np_state_head"], np.random.RandomState(seed).get_state()[1][:4])
        hashes.setdefault(seed, []).append(first_frame_hash(env.spec(), raw))
    assert torch.manual_seed_calls == [3, 8, 3]
    # the torch-drawn layout (hence the first frame) repeats for the same seed only
    assert hashes[3][0] == hashes[3][1] != hashes[8][0]


def test_remember_color_shuffle_draws_from_seeded_torch(world) -> None:
    torch, gym = world
    env = MikasaAdapter().make("mikasa/RememberColor5-VLA-v0", {})
    a = env.reset(11, {}, None).fields
    layout = gym.envs[0].layout.copy()
    torch.rand(7)  # disturb the global torch RNG between episodes
    b = env.reset(11, {}, None).fields
    assert a["oracle_color"] == b["oracle_color"] == a["oracle_info"]
    assert np.array_equal(a["image"], b["image"]) and np.array_equal(gym.envs[0].layout, layout)
    env.reset(12, {}, None)
    assert not np.array_equal(gym.envs[0].layout, layout)


def test_split_puts_success_and_oracle_in_evaluator_only(world) -> None:
    torch, gym = world
    env = MikasaAdapter().make("mikasa/ShellGameTouch-v0", {})
    spec = env.spec()
    raw = env.reset(5, {}, None)
    obs, evaluator = split(spec, raw.fields)
    assert set(obs) == {"image", "joints", "wrist_image", "camera_intrinsic", "camera_extrinsic"}
    assert "oracle_info" not in obs and "task_cue" not in obs
    cup = int(gym.envs[0].cup_with_ball_number.numpy()[0])
    assert evaluator["oracle_cup"] == evaluator["oracle_info"] == cup
    assert evaluator["success"] is False and evaluator["seed"] == 5
    assert obs["image"].shape == (128, 128, 3) and obs["image"].dtype == np.uint8
    assert obs["joints"].shape == (25,) and obs["joints"].dtype == np.float32
    # extra (tcp_pose) first, then agent (qpos, qvel) — FlattenRGBDObservationWrapper(joints=True) order
    assert obs["joints"][:7].tolist() == [0.0, 0.0, pytest.approx(0.3), 1.0, 0.0, 0.0, 0.0]  # the fake's tcp_pose
    assert obs["joints"][7:16].tolist() == list(range(9)) and obs["joints"][16:].tolist() == [0.0] * 9


def test_step_batches_the_action_and_runs_to_the_time_limit(world) -> None:
    torch, gym = world
    env = MikasaAdapter().make("mikasa/ShellGameTouch-v0", {})
    env.reset(0, {}, None)
    base = gym.envs[0]
    raw = None
    for t in range(90):
        action = np.full(8, 0.95 if t == 6 else 0.0, np.float32)
        raw = env.step(action)
        sent = base.actions[-1]
        assert sent.shape == (1, 8) and sent.numpy().dtype == np.float32
        if t == 6:
            assert raw.fields["success"] and raw.fields["terminated"]
            assert not raw.done  # MIKASA evaluation ignores terminations
        if t > 6:
            assert raw.fields["success_once"] and not raw.fields["success"]
    assert raw is not None and raw.done and raw.fields["truncated"]
    assert raw.fields["elapsed_steps"] == 90


def test_success_once_makes_a_rows_success_any_steps_success(world) -> None:
    # MIKASA-Robo-VLA's harness reports success_once (vla/benchmarking.py run_episode); the default stays success at the end
    env = MikasaAdapter().make("mikasa/ShellGameTouch-v0", {"success": "once"})
    env.reset(0, {}, None)
    seen = [env.step(np.full(8, 0.95 if t == 6 else 0.0, np.float32)).fields for t in range(90)]
    assert [f["success"] for f in seen] == [False] * 6 + [True] * 84
    assert seen[-1]["success_once"] and seen[-1]["elapsed_steps"] == 90
    with pytest.raises(AdapterError, match=r"kwargs\.success must be 'end'.*got 'first'"):
        MikasaAdapter().make("mikasa/ShellGameTouch-v0", {"success": "first"})


def test_terminations_end_the_episode_when_asked(world) -> None:
    env = MikasaAdapter().make("mikasa/ShellGameTouch-v0", {"ignore_terminations": False})
    env.reset(0, {}, None)
    for _ in range(6):
        env.step(np.zeros(8, np.float32))
    assert env.step(np.full(8, 0.95, np.float32)).done


def test_init_state_id_is_refused(world) -> None:
    env = MikasaAdapter().make("mikasa/ShellGameTouch-v0", {})
    with pytest.raises(AdapterError, match="seed selects"):
        env.reset(0, {}, 3)


def test_translate_fixture_directly() -> None:
    """Translation against a recorded-shape fixture, without any fake module."""
    from fakes.common import FakeTensor

    obs = {
        "agent": {"qpos": FakeTensor(np.ones((1, 9), np.float32)), "qvel": FakeTensor(np.zeros((1, 9), np.float32))},
        "extra": {"tcp_pose": FakeTensor(np.full((1, 7), 2.0, np.float32))},
        "sensor_param": {},
        "sensor_data": {"base_camera": {"rgb": FakeTensor(np.full((1, 128, 128, 3), 9, np.uint8))}},
        "task_cue": FakeTensor(np.ones((1, 1)) * 4242424242),
        "oracle_info": FakeTensor(np.array([[2]], np.uint8)),
    }
    info = {"success": FakeTensor(np.array([True])), "elapsed_steps": FakeTensor(np.array([7], np.int32))}
    fields = translate(
        obs,
        oracle=2,
        oracle_field="oracle_cup",
        task="ShellGameTouch-v0",
        seed=4,
        reward=FakeTensor(np.array([3.0])),
        terminated=FakeTensor(np.array([True])),
        truncated=FakeTensor(np.array([False])),
        info=info,
    )
    assert fields["image"].shape == (128, 128, 3) and "wrist_image" not in fields
    assert fields["success"] is True and fields["elapsed_steps"] == 7 and fields["reward"] == 3.0
    assert "task_cue" not in fields and "oracle_info" in fields and "cubes" not in fields


def test_missing_mani_skill_is_sim_unavailable(world, monkeypatch) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "mani_skill", None)
    with pytest.raises(SimUnavailable) as info:
        MikasaAdapter().make("mikasa/ShellGameTouch-v0", {})
    assert info.value.code == "E_SIM_UNAVAILABLE"
    assert "'mani_skill'" in info.value.message and "bash scripts/setup-sims.sh mikasa (mani_skill==3.0.0b15)" in info.value.message
    assert MikasaAdapter().unavailable() is not None


def test_joints_takes_tcp_pose_qpos_qvel_only() -> None:
    """joints carries obs['extra']'s tcp_pose only: the answer MIKASA adds to extra in state modes is never copied."""
    from fakes.common import FakeTensor
    from imep_sim_bridge.adapters.mikasa import flatten_joints

    obs = {
        "agent": {"qpos": FakeTensor(np.ones((1, 9), np.float32)), "qvel": FakeTensor(np.zeros((1, 9), np.float32))},
        "extra": {"tcp_pose": FakeTensor(np.full((1, 7), 2.0, np.float32))},
    }
    plain = flatten_joints(obs)
    leaky = {
        **obs,
        "extra": {"oracle_info": FakeTensor(np.array([2], np.uint8)), "goal_2_pose": FakeTensor(np.full((1, 3), 9.0, np.float32)), **obs["extra"]},
    }
    assert plain.shape == (25,) and np.array_equal(flatten_joints(leaky), plain)
    with pytest.raises(AdapterError, match=r"obs\['agent'\] has no 'qvel'"):
        flatten_joints({**obs, "agent": {"qpos": obs["agent"]["qpos"]}})


def test_seed_above_2_32_is_refused_not_wrapped(world) -> None:
    torch, gym = world
    env = MikasaAdapter().make("mikasa/RememberColor3-v0", {})
    with pytest.raises(AdapterError) as info:
        env.reset(2**32 + 7, {}, None)
    assert info.value.message == (
        "mikasa/RememberColor3-v0: seed 4294967303 is outside 0 … 2^32 − 1 (4294967295), the seeds ManiSkill's "
        "env.reset(seed=…) (np.random.RandomState) takes; choose one below 2^32 "
        "(seeds are not wrapped modulo 2^32: two seeds would then be one episode)"
    )
    assert torch.manual_seed_calls == [] and gym.envs[0].reset_log == []  # refused before any seeding
    env.reset(2**32 - 1, {}, None)
    assert gym.envs[0].reset_log[0]["seed"] == 2**32 - 1 and torch.manual_seed_calls == [2**32 - 1]


#: ManiSkill 3 panda `pd_joint_pos` (normalize_action=False): the arm's joint limits, the gripper's -0.01 … 0.04.
PANDA_JOINT_LOW = [-2.8973, -1.7628, -2.8973, -3.0718, -2.8973, -0.0175, -2.8973, -0.01]
PANDA_JOINT_HIGH = [2.8973, 1.7628, 2.8973, -0.0698, 2.8973, 3.7525, 2.8973, 0.04]


def test_per_dimension_action_bounds_are_omitted_not_widened(world, monkeypatch) -> None:
    init = mikasa_fake.FakeMikasaEnv.__init__

    def with_joint_pos_box(self, *args, **kwargs):
        init(self, *args, **kwargs)
        self.single_action_space = self.action_space = Box(PANDA_JOINT_LOW, PANDA_JOINT_HIGH, (8,))

    monkeypatch.setattr(mikasa_fake.FakeMikasaEnv, "__init__", with_joint_pos_box)
    spec = MikasaAdapter().make("mikasa/ShellGameTouch-v0", {"control_mode": "pd_joint_pos"}).spec()
    assert (spec.action.low, spec.action.high) == (None, None)  # not (-3.0718, 3.7525)
    assert spec.to_wire()["action"] == {"shape": [8], "dtype": "float32"}
