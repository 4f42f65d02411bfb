"""MIKASA adapter in state mode (RememberColor), and the fake against the recordings of the real envs."""

from __future__ import annotations

import json

import numpy as np
import pytest

from fakes import mikasa_fake
from fakes.common import FakeTensor, install
from fixtures.record_mikasa import structure
from imep_sim_bridge.adapters.mikasa import MikasaAdapter, cube_rows
from imep_sim_bridge.spec import split

STATE = {"obs_mode": "state", "sim_backend": "cpu", "control_mode": "pd_ee_delta_pos"}


@pytest.fixture
def world(monkeypatch):
    mods, torch, gym = mikasa_fake.modules()
    install(monkeypatch, mods)
    return torch, gym


@pytest.mark.parametrize("path", sorted(mikasa_fake.FIXTURES.glob("*.json")), ids=lambda p: p.name)
def test_the_fake_returns_what_the_real_env_returned(world, path) -> None:
    """Same observation leaves (path, shape, dtype), info keys and time limit as the recording."""
    rec = json.loads(path.read_text())
    torch, gym = world
    env = gym.make(rec["task"], num_envs=1, **rec["make_kwargs"])
    obs, _ = env.reset(seed=3)
    assert structure(obs) == rec["observation"]
    for _ in range(rec["max_episode_steps"]):
        obs, _, _, truncated, info = env.step(FakeTensor(np.zeros((1, *rec["action_space"]["shape"]), np.float32)))
    assert sorted(info) == rec["info_keys"] and bool(truncated.numpy()[0])
    assert env.max_episode_steps == rec["max_episode_steps"]


def test_the_legacy_remembercolor_never_puts_its_cubes_back() -> None:
    """Recorded from the real RememberColor3-v0: after the cue every cube stays above z = 900 (unsolvable)."""
    rec = json.loads((mikasa_fake.FIXTURES / "RememberColor3-v0.state_dict.json").read_text())
    late = [s for s in rec["episode"]["steps"] if s["elapsed"] >= 10]
    assert len(late) == 51 and all(c[2] > 900 for s in late for c in s["cubes"])
    assert not any(s["success"] for s in rec["episode"]["steps"])
    vla = json.loads((mikasa_fake.FIXTURES / "RememberColor3-VLA-v0.state_dict.json").read_text())
    ep = vla["episode"]
    back = ep["cue_steps"] + ep["empty_steps"]
    assert all(c[2] < 0.03 for s in ep["steps"] if s["elapsed"] >= back for c in s["cubes"])


def test_cube_rows_zero_what_mikasa_hides() -> None:
    rows = cube_rows(
        [FakeTensor(np.array([[0.1, 0.2, 0.02]])), FakeTensor(np.array([[0.3, -0.1, 1000.0]])), FakeTensor(np.array([[0.0, 0.0, 963.0]]))]
    )
    assert rows.dtype == np.float32
    assert rows.tolist() == [[pytest.approx(0.1), pytest.approx(0.2), pytest.approx(0.02), 1.0], [0.0] * 4, [0.0] * 4]


def test_state_mode_shows_the_cue_then_the_candidates_never_the_oracle(world) -> None:
    torch, gym = world
    env = MikasaAdapter().make("mikasa/RememberColor3-VLA-v0", STATE)
    ((_, kwargs),) = gym.make_calls
    assert kwargs["obs_mode"] == "state_dict"
    spec = env.spec()
    assert spec.method_visible == ("joints", "cubes") and spec.first_frame_field is None
    assert spec.observation["cubes"].shape == (3, 4) and spec.observation["joints"].shape == (25,)
    assert spec.to_wire()["fact"] == {"field": "oracle_color", "domain": [0, 1, 2]}
    assert spec.to_wire()["decisionFromStep"] == 2  # CUE_PHASE_STEPS[0] + EMPTY_PHASE_STEPS[0]
    assert spec.max_steps == 25
    raw = env.reset(5, {}, None)
    base = gym.envs[0]
    obs, ev = split(spec, raw.fields)
    assert set(obs) == {"joints", "cubes"} and ev["oracle_color"] == base.fact
    phases = []
    for _ in range(spec.max_steps):
        cubes = obs["cubes"]
        visible = cubes[:, 3] == 1.0
        if visible.sum() == 1:
            assert int(np.argmax(visible)) == ev["oracle_color"]  # the cue: the one colour shown, at the centre
            assert cubes[visible][0, :2].tolist() == [0.0, 0.0]
        assert (cubes[~visible] == 0).all()
        phases.append(int(visible.sum()))
        raw = env.step(np.zeros(4, np.float32))
        obs, ev = split(spec, raw.fields)
    cue, empty = base.cue_steps, base.empty_steps
    assert phases == [1] * cue + [0] * empty + [3] * (25 - cue - empty)
    assert raw.done and ev["elapsed_steps"] == 25


def test_legacy_decision_step_and_domain_for_nine_colours(world) -> None:
    spec = MikasaAdapter().make("mikasa/RememberColor9-v0", STATE).spec()
    assert spec.to_wire()["fact"] == {"field": "oracle_color", "domain": list(range(9))}
    assert spec.to_wire()["decisionFromStep"] == 10 and spec.max_steps == 60  # TIME_OFFSET + DELTA_TIME
