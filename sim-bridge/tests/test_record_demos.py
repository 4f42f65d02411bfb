"""record-demos without a simulator: seeds, the noise stream, the pass-through reads, a fake env's episode."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from imep_sim_bridge.demos.record import PassThroughMemory, RecordError, noise_for, numeric_fields, parse_seeds, record_episode
from imep_sim_bridge.spec import ActionSpec, EnvSpec, FactSpec, FieldSpec, RawStep

SIM_BRIDGE = Path(__file__).resolve().parents[1]


def test_parse_seeds() -> None:
    assert parse_seeds("900000:900003") == [900000, 900001, 900002, 900003]
    for bad in ("5", "3:2", "a:b", "-1:2"):
        with pytest.raises(RecordError, match="--seeds"):
            parse_seeds(bad)


def test_noise_stream_is_per_episode_and_motion_only() -> None:
    a = noise_for(0.1, 7, 900001, [0, 1, 2], 25, 4)
    assert a.shape == (25, 4) and np.all(a[:, 3] == 0) and np.all(a[:, :3] != 0)
    assert np.array_equal(a, noise_for(0.1, 7, 900001, [0, 1, 2], 25, 4))  # whatever was recorded before
    assert not np.array_equal(a, noise_for(0.1, 8, 900001, [0, 1, 2], 25, 4))
    assert not np.array_equal(a, noise_for(0.1, 7, 900002, [0, 1, 2], 25, 4))
    big = noise_for(0.1, 7, 1, [0], 20000, 1)
    assert abs(float(big.std()) - 0.1) < 0.003


def test_pass_through_memory() -> None:
    mem = PassThroughMemory()
    items = [{"identity": {"slot": 0, "timestep": 3}, "leaves": {"cue": np.array([1.0, 0.0], np.float32)}}]
    got = mem.read("perceptual", {}, items)
    assert len(got) == 1 and got[0]["identity"] == items[0]["identity"]
    assert list(got[0]["leaves"]) == ["cue"] and np.array_equal(got[0]["leaves"]["cue"], items[0]["leaves"]["cue"])
    assert got[0] is not items[0] and mem.reads == 1


SPEC = EnvSpec(
    id="fake/cue-v0",
    max_steps=4,
    action=ActionSpec(shape=(2,), dtype="float32", low=-1.0, high=1.0),
    observation={
        "pos": FieldSpec((2,), "float32"),
        "cue": FieldSpec((), "int64"),
        "instruction": FieldSpec((), "string"),
        "goal": FieldSpec((), "string"),
        "success": FieldSpec((), "bool"),
        "secret": FieldSpec((3,), "float32"),
    },
    method_visible=("pos", "cue", "instruction"),
    evaluator_only=("goal", "success", "secret"),
    fact=FactSpec(field="goal", domain=("left", "right")),
)


class FakeEnv:
    def __init__(self) -> None:
        self.t = 0
        self.executed: list[np.ndarray] = []

    def _raw(self) -> RawStep:
        fields = {"pos": np.array([self.t, -self.t], np.float32), "cue": 2 if self.t == 0 else 0, "instruction": "go"}
        fields.update({"goal": "right", "success": self.t >= 3, "secret": np.full(3, 99.0, np.float32)})
        return RawStep(fields=fields, done=self.t >= 3)

    def reset(self, seed: int, options: Any, init_state_id: Any) -> RawStep:
        self.t = 0
        return self._raw()

    def step(self, action: np.ndarray) -> RawStep:
        self.executed.append(action)
        self.t += 1
        return self._raw()


class FakePolicy:
    def __init__(self) -> None:
        self.seen: list[set[str]] = []

    def reset(self, slot: int, episode: str) -> None:
        self.episode = episode

    def infer(self, slot: int, obs: dict[str, Any], memory: Any) -> dict[str, Any]:
        self.seen.append(set(obs))
        return {"action": np.array([0.95, float(obs["cue"])], np.float32)}


def test_record_episode_with_a_fake_env() -> None:
    env, policy = FakeEnv(), FakePolicy()
    ep = record_episode(env, SPEC, policy, 5, noise=0.2, noise_seed=7, dims=[0], task="go")
    assert numeric_fields(SPEC) == {"pos": (2,), "cue": ()}
    assert policy.seen == [{"pos", "cue", "instruction"}] * 3  # never an evaluator-only field
    assert set(ep.observation) == {"pos", "cue"} and ep.length == 3
    assert ep.observation["pos"].tolist() == [[0, 0], [1, -1], [2, -2]] and ep.observation["cue"].tolist() == [2, 0, 0]
    assert ep.fact == 1 and ep.success is True and ep.seed == 5
    assert ep.done.tolist() == [False, False, True] and ep.step_success.tolist() == [False, False, True]
    assert ep.action.tolist() == [[pytest.approx(0.95), 2.0], [pytest.approx(0.95), 0.0], [pytest.approx(0.95), 0.0]]
    eps = noise_for(0.2, 7, 5, [0], SPEC.max_steps, 2)
    want = np.clip(ep.action.astype(np.float64) + eps[:3], -1, 1).astype(np.float32)
    assert np.array_equal(ep.executed_action, want) and np.array_equal(np.stack(env.executed), want)
    assert ep.executed_action[:, 1].tolist() == [1.0, 0.0, 0.0]  # clipped to the spec's bounds, dim 1 unnoised


def test_cli_bad_seeds_is_one_line_exit_2() -> None:
    args = ["--adapter", "mikasa", "--env", "x", "--policy", "p", "--seeds", "9:1", "--out", "/x"]
    proc = subprocess.run(
        [sys.executable, "-m", "imep_sim_bridge", "record-demos", *args],
        cwd=SIM_BRIDGE,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.strip().splitlines() == ["imep-sim-bridge: error: --seeds '9:1': give A:B with 0 <= A <= B"]
