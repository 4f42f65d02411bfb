"""remember-color-memory / remember-color-no-memory on the MIKASA adapter over the (recording-shaped) fake."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from fakes import mikasa_fake
from fakes.common import install
from imep_sim_bridge.adapters.mikasa import MikasaAdapter
from imep_sim_bridge.errors import AdapterError
from imep_sim_bridge.policy_host import POLICIES, policy_identity
from imep_sim_bridge.remember_color_policy import RememberColorMemoryPolicy, move_to
from imep_sim_bridge.spec import split

STATE = {"obs_mode": "state", "sim_backend": "cpu", "control_mode": "pd_ee_delta_pos"}


class Proxy:
    """memory.read as the client answers it: intact, blocked (N) or with every leaf replaced (a donor)."""

    def __init__(self, mode: str = "intact", donor: np.ndarray | None = None) -> None:
        self.mode, self.donor = mode, donor
        self.calls: list[tuple[str, dict[str, Any], list[dict[str, Any]]]] = []

    def read(self, bank: str, ctx: dict[str, Any], items: list[dict[str, Any]]) -> list[dict[str, Any]]:
        self.calls.append((bank, ctx, items))
        if self.mode == "blocked":
            return []
        if self.mode == "donor":
            return [{**it, "leaves": {"colour": self.donor.copy()}} for it in items]
        return items


@pytest.fixture
def env(monkeypatch):
    mods, torch, gym = mikasa_fake.modules()
    install(monkeypatch, mods)
    return MikasaAdapter().make("mikasa/RememberColor3-VLA-v0", STATE), gym


def episode(env: Any, policy: Any, seed: int, proxy: Proxy) -> dict[str, Any]:
    e, _ = env
    spec = e.spec()
    obs, ev = split(spec, e.reset(seed, {}, None).fields)
    policy.reset(0, f"ep{seed}")
    while True:
        out = policy.infer(0, obs, proxy)
        raw = e.step(out["action"])
        obs, ev = split(spec, raw.fields)
        if raw.done:
            return ev


def test_with_memory_it_touches_the_cue_colour_and_without_it_colour_0(env) -> None:
    seeds = range(9)
    facts, won, blocked, ignored = [], [], [], []
    for seed in seeds:
        ev = episode(env, RememberColorMemoryPolicy(max_batch=1), seed, Proxy())
        facts.append(ev["oracle_color"])
        won.append(ev["success"])
        blocked.append(episode(env, RememberColorMemoryPolicy(max_batch=1), seed, Proxy("blocked"))["success"])
        ignored.append(episode(env, POLICIES["remember-color-no-memory"](max_batch=1), seed, Proxy())["success"])
    assert set(facts) == {0, 1, 2}  # the seeds cover every colour
    assert all(won)
    assert blocked == [f == 0 for f in facts] == ignored


def test_reads_happen_only_once_the_candidates_are_out_and_carry_the_cue(env) -> None:
    proxy = Proxy()
    policy = RememberColorMemoryPolicy(max_batch=1)
    ev = episode(env, policy, 4, proxy)
    _, gym = env
    base = gym.envs[0]
    assert len(proxy.calls) == 25 - (base.cue_steps + base.empty_steps)
    bank, ctx, items = proxy.calls[0]
    assert bank == "perceptual" and ctx["decisionStep"] is True and ctx["queryIndex"] == base.cue_steps + base.empty_steps + 1
    assert len(items) == base.cue_steps == ctx["candidateCount"]  # one entry per cue step (reset frame included)
    assert [it["identity"]["timestep"] for it in items] == list(range(base.cue_steps))[::-1]  # most recent first
    for it in items:
        assert it["leaves"]["colour"].tolist() == np.eye(3)[ev["oracle_color"]].tolist()


def test_a_donors_colour_is_what_it_then_touches(env) -> None:
    """A substituted read steers the choice: the memory is causal, not decorative."""
    ev = episode(env, RememberColorMemoryPolicy(max_batch=1), 2, Proxy())
    other = (ev["oracle_color"] + 1) % 3
    swapped = episode(env, RememberColorMemoryPolicy(max_batch=1), 2, Proxy("donor", np.eye(3, dtype=np.float32)[other]))
    assert ev["success"] and not swapped["success"]


def test_bad_observations_are_refused_and_identity_lists_its_source(env) -> None:
    policy = RememberColorMemoryPolicy(max_batch=1)
    policy.reset(0, "e")
    with pytest.raises(AdapterError, match=r"obs.cubes must be a float \[C, 4\]"):
        policy.infer(0, {"joints": np.zeros(25, np.float32), "cubes": np.zeros((3, 3), np.float32)}, Proxy())
    with pytest.raises(AdapterError, match="slot 1 was not reset"):
        RememberColorMemoryPolicy(max_batch=2).infer(1, {}, Proxy())
    ident = policy_identity(policy)
    assert ident["memory"] == {"bank": "episode-local", "banks": ["perceptual"], "k": 8}
    assert [f["path"] for f in ident["files"]] == ["imep_sim_bridge/cube_vision.py", "imep_sim_bridge/remember_color_policy.py"]


def test_move_to_is_a_clipped_proportional_step() -> None:
    a = move_to(np.array([0.0, 0.0, 0.3]), np.array([0.05, -0.5, 0.3]))
    assert a.dtype == np.float32 and a.tolist() == [pytest.approx(0.5), -1.0, 0.0, 1.0]
