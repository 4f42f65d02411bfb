from __future__ import annotations

import warnings

import numpy as np
import pytest

from fakes import simpler_fake
from fakes.common import Box, install
from imep_sim_bridge.adapters.base import uniform_bounds
from imep_sim_bridge.adapters.simplerenv import TASKS, SimplerEnvAdapter
from imep_sim_bridge.errors import AdapterError
from imep_sim_bridge.spec import split


@pytest.fixture
def world(monkeypatch):
    mods, world = simpler_fake.modules()
    install(monkeypatch, mods)
    return world


def test_the_real_make_leaks_kwargs_between_calls(world) -> None:
    """Why the adapter needs fresh kwargs: simpler_env.make mutates ENVIRONMENT_MAP."""
    world.make("widowx_carrot_on_plate", rgb_overlay_path="/tmp/x.png")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        second = world.make("widowx_carrot_on_plate")
    assert second.kwargs.get("rgb_overlay_path") == "/tmp/x.png"  # leaked


def test_fresh_kwargs_per_make(world) -> None:
    adapter = SimplerEnvAdapter()
    first = adapter.make("simpler/widowx_carrot_on_plate", {"rgb_overlay_path": "/tmp/x.png"})
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the real make warns when a key is already present
        second = adapter.make("simpler/widowx_carrot_on_plate", {})
    k1, k2 = world.made[0].kwargs, world.made[1].kwargs
    assert k1 == {"obs_mode": ("rgbd",), "prepackaged_config": True, "rgb_overlay_path": "/tmp/x.png"}
    assert k2 == {"obs_mode": ("rgbd",), "prepackaged_config": True}
    assert first.spec().id == second.spec().id == "simpler/widowx_carrot_on_plate"


@pytest.mark.parametrize("task", list(TASKS))
def test_instruction_image_and_split(world, task: str) -> None:
    env = SimplerEnvAdapter().make(f"simpler/{task}", {})
    spec = env.spec()
    raw = env.reset(4, {}, None)
    obs, evaluator = split(spec, raw.fields)
    instruction = simpler_fake.INSTRUCTIONS[world.made[0].env_name]
    assert obs["instruction"] == instruction
    h, w = (512, 640) if task.startswith("google_robot") else (480, 640)
    assert obs["image"].shape == (h, w, 3) and obs["image"].dtype == np.uint8
    assert spec.observation["image"].shape == (h, w, 3)
    assert set(obs) == {"image", "instruction"}
    assert evaluator["success"] is False and evaluator["seed"] == 4 and evaluator["task"] == task
    assert spec.max_steps == simpler_fake.MAX_STEPS[world.made[0].env_name]
    assert spec.action.shape == (7,)
    # the image is exactly get_image_from_maniskill2_obs_dict(env, obs)
    camera = "overhead_camera" if task.startswith("google_robot") else "3rd_view_camera"
    assert np.array_equal(obs["image"], world.made[0]._obs()["image"][camera]["rgb"])


def test_seed_and_init_state_reach_reset(world) -> None:
    env = SimplerEnvAdapter().make("simpler/widowx_spoon_on_towel", {})
    raw = env.reset(9, {"robot_init_options": {"init_xy": [0.1, 0.2]}}, 17)
    (call,) = world.made[0].resets
    assert call["seed"] == 9
    assert call["options"]["obj_init_options"] == {"episode_id": 17}
    assert call["options"]["robot_init_options"] == {"init_xy": [0.1, 0.2]}
    assert raw.fields["episode_id"] == 17
    raw = env.reset(9, {}, None)
    assert raw.fields["episode_id"] == np.random.RandomState(9).randint(24)


def test_coke_can_has_no_episode_table(world) -> None:
    env = SimplerEnvAdapter().make("simpler/google_robot_pick_coke_can", {})
    with pytest.raises(AdapterError, match="init_xy"):
        env.reset(0, {}, 2)


def test_step_success_is_evaluator_only_and_episode_runs_to_truncation(world) -> None:
    env = SimplerEnvAdapter().make("simpler/widowx_stack_cube", {})
    env.reset(0, {}, None)
    raw = env.step(np.array([0, 0, 0, 0, 0, 0, 1.0], np.float32))
    assert raw.fields["success"] is True and raw.done is False
    assert raw.fields["episode_stats"] == {"moved_correct_obj": True, "is_src_obj_grasped": False}
    assert world.made[0].actions[-1].dtype == np.float32
    for _ in range(59):
        raw = env.step(np.zeros(7, np.float32))
    assert raw.done and raw.fields["truncated"]


@pytest.mark.parametrize("task", list(TASKS))
def test_per_dimension_action_bounds_are_omitted_not_widened(world, task: str) -> None:
    """The real Box is [-1,1]^3 × [-π/2,π/2]^3 × [-1,1]; the spec's scalar low/high cannot say that."""
    env = SimplerEnvAdapter().make(f"simpler/{task}", {})
    box = world.made[0].action_space
    assert box.low.tolist() == pytest.approx([-1, -1, -1, -np.pi / 2, -np.pi / 2, -np.pi / 2, -1])
    assert box.high.tolist() == pytest.approx([1, 1, 1, np.pi / 2, np.pi / 2, np.pi / 2, 1])
    spec = env.spec()
    assert (spec.action.low, spec.action.high) == (None, None)
    assert spec.to_wire()["action"] == {"shape": [7], "dtype": "float32"}


def test_uniform_bounds() -> None:
    assert uniform_bounds(Box(-1.0, 1.0, (7,))) == (-1.0, 1.0)
    assert uniform_bounds(Box([-1, -1, -2], 1.0, (3,))) == (None, 1.0)
    assert uniform_bounds(Box(-np.inf, np.inf, (3,))) == (None, None)
    assert uniform_bounds(object()) == (None, None)


def test_seed_above_2_32_is_refused_not_wrapped(world) -> None:
    env = SimplerEnvAdapter().make("simpler/widowx_carrot_on_plate", {})
    with pytest.raises(AdapterError) as info:
        env.reset(2**32, {}, None)
    assert info.value.message == (
        "simpler/widowx_carrot_on_plate: seed 4294967296 is outside 0 … 2^32 − 1 (4294967295), the seeds "
        "ManiSkill2_real2sim's env.reset(seed=…) (np.random.RandomState) takes; choose one below 2^32 "
        "(seeds are not wrapped modulo 2^32: two seeds would then be one episode)"
    )
    assert world.made[0].resets == []
    raw = env.reset(2**32 - 1, {}, None)
    assert world.made[0].resets[0]["seed"] == 2**32 - 1 and raw.fields["seed"] == 2**32 - 1
    assert raw.fields["episode_id"] == np.random.RandomState(2**32 - 1).randint(24)
