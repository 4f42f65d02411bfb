from __future__ import annotations

import math
import sys

import numpy as np
import pytest

from fakes.common import LazyFakeFinder, install_lazy
from fakes.libero_fake import FakeWorld
from imep_sim_bridge.adapters.libero import (
    LIBERO_DUMMY_ACTION,
    LiberoAdapter,
    flip,
    parse_env_id,
    quat2axisangle,
)
from imep_sim_bridge.errors import AdapterError, SimUnavailable
from imep_sim_bridge.spec import first_frame_hash, frame_hash, split


@pytest.fixture
def world(monkeypatch):
    monkeypatch.delenv("MUJOCO_GL", raising=False)
    monkeypatch.delenv("PYOPENGL_PLATFORM", raising=False)
    w = FakeWorld()
    finder = LazyFakeFinder(w.factories(), watch_env=("MUJOCO_GL", "PYOPENGL_PLATFORM"))
    install_lazy(monkeypatch, finder)
    # modules the finder creates must not outlive the test
    for name in w.factories():
        monkeypatch.setitem(sys.modules, name, None)
        monkeypatch.delitem(sys.modules, name)
    w.finder = finder
    return w


def test_mujoco_gl_is_egl_before_libero_is_imported(world) -> None:
    LiberoAdapter().make("libero/libero_spatial/3", {})
    assert "libero.libero.envs" in world.finder.imported
    for name in world.finder.imported:
        assert world.finder.environ_at_import[name]["MUJOCO_GL"] == "egl", name


def test_user_choice_of_gl_backend_is_kept(world, monkeypatch) -> None:
    monkeypatch.setenv("MUJOCO_GL", "osmesa")
    LiberoAdapter().make("libero/libero_spatial/0", {})
    assert world.finder.environ_at_import["libero.libero.envs"] == {"MUJOCO_GL": "osmesa", "PYOPENGL_PLATFORM": None}


def test_make_follows_openpi(world) -> None:
    env = LiberoAdapter().make("libero/libero_spatial/3", {})
    (fake,) = world.envs
    task = world.benchmark_cls().get_task(3)
    assert fake.bddl_file_name == f"/fake/libero/bddl_files/libero_spatial/{task.bddl_file}"
    assert (fake.h, fake.w) == (256, 256)
    spec = env.spec()
    assert spec.instruction == task.language
    assert spec.max_steps == 220
    assert spec.action.shape == (7,)
    assert spec.method_visible == ("image", "wrist_image", "state", "instruction")
    assert "success" in spec.evaluator_only


def test_reset_seeds_sets_init_state_and_warms_up(world) -> None:
    env = LiberoAdapter().make("libero/libero_spatial/2", {})
    (fake,) = world.envs
    raw = env.reset(7, {}, 4)
    assert fake.calls[:3] == [("seed", 7), ("reset", None), ("set_init_state", 4.0 + 200)]
    warmup = fake.calls[3:]
    assert warmup == [("step", LIBERO_DUMMY_ACTION)] * 10
    assert LIBERO_DUMMY_ACTION == [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, -1.0]
    assert raw.done is False and raw.fields["initStateId"] == 4 and raw.fields["seed"] == 7
    # default init state: seed mod the number of init states (50)
    env.reset(53, {}, None)
    assert ("set_init_state", 3.0 + 200) in fake.calls


def test_warmup_length_is_configurable(world) -> None:
    env = LiberoAdapter().make("libero/libero_spatial/0", {"num_steps_wait": 3, "resolution": 128})
    (fake,) = world.envs
    env.reset(0, {}, 0)
    assert sum(1 for c in fake.calls if c[0] == "step") == 3
    assert env.spec().observation["image"].shape == (128, 128, 3)


def test_images_are_rotated_180_degrees(world) -> None:
    env = LiberoAdapter().make("libero/libero_spatial/0", {})
    (fake,) = world.envs
    raw = env.reset(1, {}, 0)
    fake_obs = fake._obs()
    obs, evaluator = split(env.spec(), raw.fields)
    img = obs["image"]
    assert img.shape == (256, 256, 3) and img.dtype == np.uint8 and img.flags.c_contiguous
    assert np.array_equal(img, fake_obs["agentview_image"][::-1, ::-1])
    assert img[0, 0].tolist()[:2] == [255, 255] and img[255, 255].tolist()[:2] == [0, 0]
    assert np.array_equal(obs["wrist_image"], fake_obs["robot0_eye_in_hand_image"][::-1, ::-1])
    assert first_frame_hash(env.spec(), raw) == frame_hash(fake_obs["agentview_image"][::-1, ::-1])
    assert set(evaluator) == {"reward", "success", "seed", "initStateId", "task"}


def test_state_is_openpis_eef_axis_angle_gripper(world) -> None:
    env = LiberoAdapter().make("libero/libero_spatial/0", {})
    state = env.reset(1, {}, 0).fields["state"]
    assert state.dtype == np.float32 and state.shape == (8,)
    np.testing.assert_allclose(state[:3], [0.1, 0.2, 0.3], rtol=1e-6)
    np.testing.assert_allclose(state[3:6], [0.0, 0.0, math.pi / 2], rtol=1e-6)  # 90° about z
    np.testing.assert_allclose(state[6:], [0.04, -0.04], rtol=1e-6)


def test_step_sends_a_list_and_done_is_success(world) -> None:
    env = LiberoAdapter().make("libero/libero_spatial/0", {})
    (fake,) = world.envs
    env.reset(0, {}, 0)
    raw = env.step(np.array([0.1, 0, 0, 0, 0, 0, -1], np.float32))
    assert fake.calls[-1][0] == "step" and isinstance(fake.calls[-1][1], list)
    assert raw.done is False and raw.fields["success"] is False
    raw = env.step(np.array([1.0, 0, 0, 0, 0, 0, -1], np.float32))
    assert raw.done is True and raw.fields["success"] is True


def test_episode_ends_at_the_suite_horizon(world) -> None:
    env = LiberoAdapter().make("libero/libero_spatial/0", {"num_steps_wait": 0, "resolution": 8})
    env.reset(0, {}, 0)
    for t in range(220):
        raw = env.step(np.zeros(7, np.float32))
        assert raw.done == (t == 219)


def test_init_state_out_of_range(world) -> None:
    env = LiberoAdapter().make("libero/libero_spatial/0", {})
    with pytest.raises(AdapterError, match="out of range"):
        env.reset(0, {}, 50)


def test_env_ids() -> None:
    ids = LiberoAdapter().env_ids()
    assert len(ids) == 130 and "libero/libero_90/89" in ids and "libero/libero_10/0" in ids
    assert parse_env_id("libero/libero_goal/9") == ("libero_goal", 9)
    assert parse_env_id("libero/libero_goal/10") is None
    assert parse_env_id("libero/libero_goal/01") is None


def test_flip_and_quat_helpers() -> None:
    img = np.arange(2 * 3 * 3, dtype=np.uint8).reshape(2, 3, 3)
    assert np.array_equal(flip(img), img[::-1, ::-1])
    assert np.array_equal(quat2axisangle(np.array([0.0, 0.0, 0.0, 1.0])), np.zeros(3))


def test_absent_libero(monkeypatch) -> None:
    monkeypatch.setitem(sys.modules, "libero", None)
    with pytest.raises(SimUnavailable, match="'libero'"):
        LiberoAdapter().make("libero/libero_object/1", {})
