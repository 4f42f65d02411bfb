"""mikasa-vla-memory / mikasa-vla-no-memory (mikasa_vla_policy.py) and the Intercept controller's maths
(intercept_controller.py) on synthetic observations; RememberColor dispatch over the recording-shaped fake.

The real simulator: tests/real/test_mikasa_vla_policy_real.py.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from fakes import mikasa_fake
from fakes.common import install
from imep_sim_bridge import intercept_controller as ic
from imep_sim_bridge.adapters.mikasa import MikasaAdapter
from imep_sim_bridge.errors import AdapterError
from imep_sim_bridge.mikasa_vla_policy import POLICIES, RECENT, MikasaVlaMemoryPolicy, MikasaVlaNoMemoryPolicy
from imep_sim_bridge.policy_host import load_policies, policy_identity
from imep_sim_bridge.remember_color_policy import RememberColorMemoryPolicy
from imep_sim_bridge.spec import split

STATE = {"obs_mode": "state", "sim_backend": "cpu", "control_mode": "pd_ee_delta_pos"}
V = np.array([0.0005, 0.0195])  # the rolling ball of InterceptMedium, m per step (measured)


class Proxy:
    """memory.read as the client answers it: intact, blocked (N_blk), or every 'ball' leaf replaced (a donor)."""

    def __init__(self, mode: str = "intact", donor: np.ndarray | None = None) -> None:
        self.mode, self.donor = mode, donor
        self.calls: list[tuple[str, dict[str, Any], list[dict[str, Any]]]] = []

    def read(self, bank: str, ctx: dict[str, Any], items: list[dict[str, Any]]) -> list[dict[str, Any]]:
        self.calls.append((bank, ctx, items))
        if self.mode == "blocked":
            return []
        if self.mode == "donor":
            return [{**it, "leaves": {"ball": self.donor[i].copy()}} for i, it in enumerate(items)]
        return items


def rolling(t: int) -> dict[str, np.ndarray]:
    """A synthetic Intercept observation: the ball rolling at V from (-0.2, -0.8), the tool high, the goal ahead."""
    ball = np.array([-0.2 + V[0] * t, -0.8 + V[1] * t, 0.02], np.float32)
    return {"joints": np.array([-0.07, 0.0, 0.33, 0, 1, 0, 0], np.float32), "ball": ball, "goal": np.array([0.0, 0.0, 0.001], np.float32)}


# ------------------------------------------------------------------------------------------------ controller maths


def test_velocity_is_the_least_squares_slope_over_what_was_read() -> None:
    rows = np.array([[0.1 + 0.001 * t, -0.5 + 0.02 * t, 0.02, t] for t in (3, 7, 4, 5)])  # any order
    assert ic.velocity(rows) == pytest.approx([0.001, 0.02])
    assert ic.velocity(rows[:1]).tolist() == [0.0, 0.0]  # one position: no velocity
    assert ic.velocity(np.array([[0, 0, 0, 2.0], [1, 1, 0, 2.0]])).tolist() == [0.0, 0.0]  # one timestep
    assert ic.velocity(np.zeros((0, 4))).tolist() == [0.0, 0.0]


def test_actions_are_clipped_deltas_with_the_gripper_closed() -> None:
    a = ic.action_toward(np.array([0.0, 0.0, 0.3]), np.array([0.01, -0.5, 0.3]))
    assert a.dtype == np.float32 and a.tolist() == [pytest.approx(0.2), -1.0, 0.0, -1.0]


def test_the_blocking_line_is_the_goals_y_when_the_ball_gets_there_in_time_else_earlier() -> None:
    tcp = np.array([-0.1, 0.0, 0.1])
    near = ic.block_y(np.array([-0.2, -0.5, 0.02]), V, np.array([0.0, -0.1, 0.0]), tcp, 5)
    assert near == pytest.approx(-0.1 + ic.BLOCK_OFFSET)
    far = ic.block_y(np.array([-0.2, -0.9, 0.02]), V, np.array([0.0, 0.2, 0.0]), tcp, 5)
    assert far == pytest.approx(-0.9 + V[1] * (ic.LATEST_BLOCK - 5) + ic.BLOCK_OFFSET)  # stopped by LATEST_BLOCK
    # never a line the ball reaches before the tool: it is pushed out to where the tool gets first
    late = ic.block_y(np.array([-0.2, -0.12, 0.02]), V, np.array([0.0, -0.1, 0.0]), np.array([0.2, 0.3, 0.3]), 5)
    assert (late - ic.BLOCK_OFFSET + 0.12) / V[1] >= np.hypot(0.4, late - 0.3) / ic.TOOL_SPEED
    point = ic.block_point(np.array([-0.2, -0.5, 0.02]), V, near)
    steps = (near - ic.BLOCK_OFFSET + 0.5) / V[1]
    assert point.tolist() == pytest.approx([-0.2 + V[0] * steps, near, ic.LOW_Z])


def test_the_pushing_fingertip_point_is_a_face_near_an_axis_and_an_edge_otherwise() -> None:
    assert ic.pusher(np.array([1.0, 0.05])).tolist() == [ic.TIP_X, 0.0]
    assert ic.pusher(np.array([-0.05, -1.0])).tolist() == [0.0, -ic.TIP_Y]
    assert ic.pusher(np.array([0.6, -0.8])).tolist() == [ic.TIP_X, -ic.TIP_Y]


def test_a_push_goes_behind_the_ball_then_carries_it_at_distance_over_steps_left_then_lets_go() -> None:
    ball, goal = np.array([-0.2, 0.0, 0.02]), np.array([0.0, 0.0, 0.0])
    c = ic.pusher(np.array([1.0, 0.0]))
    start = ball[:2] - np.array([ic.BALL_RADIUS + ic.BEHIND, 0.0]) - c
    target, carrying, released = ic.push_target(ball, goal, np.array([-0.4, 0.0, ic.LOW_Z]), 40, False)
    assert not carrying and not released and target.tolist() == pytest.approx([*start, ic.LOW_Z])
    at_start = np.array([*start, ic.LOW_Z])
    target, carrying, released = ic.push_target(ball, goal, at_start, 40, False)
    assert carrying and not released
    assert target[0] - at_start[0] == pytest.approx(0.2 / 20 * ic.FOLLOW)  # 0.2 m over the 20 steps left
    _, carrying, released = ic.push_target(np.array([-0.01, 0.0, 0.02]), goal, at_start, 50, True)
    assert released and not carrying


def test_routes_never_sweep_the_ball_along() -> None:
    ball = np.array([0.0, 0.0, 0.02])
    touching = np.array([0.0, 0.035, ic.LOW_Z])  # resting against the fingers after a block
    away = ic.route(touching, ball, np.array([-0.06, 0.0, ic.LOW_Z]))
    assert away[:2].tolist() == pytest.approx([0.0, ic.CLEAR + 0.01])  # straight away first
    through = ic.route(np.array([0.2, 0.0, ic.LOW_Z]), ball, np.array([-0.1, 0.0, ic.LOW_Z]))
    assert abs(through[1]) == pytest.approx(ic.AROUND) and through[0] == pytest.approx(0.0)  # beside the ball
    clear = np.array([0.0, 0.2, ic.LOW_Z])
    assert ic.route(np.array([0.1, 0.2, ic.LOW_Z]), ball, clear) is clear


def test_phases_follow_what_the_velocity_says() -> None:
    ball, goal, tcp = np.array([-0.2, -0.6, 0.02]), np.array([0.0, 0.0, 0.0]), np.array([-0.1, 0.0, 0.2])
    c = ic.InterceptController()
    assert c.plan(0, tcp, ball, goal, V).phase == "wait"
    assert c.plan(ic.WAIT_STEPS, tcp, ball, goal, V).phase == "block"
    assert c.plan(ic.WAIT_STEPS + 1, tcp, ball, goal, np.zeros(2)).phase == "push"  # stopped against the fingers
    assert c.plan(ic.WAIT_STEPS + 2, tcp, ball, goal, -V).phase == "reblock"  # bounced off, rolling away
    still = ic.InterceptController()  # no memory: the ball is taken for still from the start
    still.plan(0, tcp, ball, goal, np.zeros(2))
    assert still.plan(ic.WAIT_STEPS, tcp, ball, goal, np.zeros(2)).phase == "push"
    done = ic.InterceptController()
    done.phase = "done"
    assert done.plan(50, tcp, ball, goal, V).target.tolist() == pytest.approx([tcp[0], tcp[1], ic.SAFE_Z])


# ------------------------------------------------------------------------------------------------ the policies


def run_intercept(policy: MikasaVlaMemoryPolicy, proxy: Proxy, steps: int) -> list[dict[str, Any]]:
    policy.reset(0, "ep")
    return [policy.infer(0, rolling(t), proxy) for t in range(steps)]


def test_intercept_reads_its_recent_ball_positions_through_memory_read_before_writing() -> None:
    proxy = Proxy()
    outs = run_intercept(MikasaVlaMemoryPolicy(max_batch=1), proxy, 8)
    assert len(proxy.calls) == 8  # one read per step
    bank, ctx, items = proxy.calls[0]
    assert bank == "perceptual" and items == [] and ctx["candidateCount"] == 0 and ctx["queryIndex"] == 1
    bank, ctx, items = proxy.calls[7]
    assert ctx == {"bank": "perceptual", "scope": "ep", "episode": "ep", "queryIndex": 8, "decisionStep": True, "candidateCount": 7}
    assert [it["identity"]["timestep"] for it in items] == [6, 5, 4, 3][:RECENT]  # the most recent first
    assert items[0]["leaves"]["ball"].dtype == np.float32 and items[0]["leaves"]["ball"].tolist() == pytest.approx([*rolling(6)["ball"], 6.0])
    assert outs[7]["decisionLogits"].tolist() == pytest.approx(V, abs=1e-6)  # the velocity it estimated
    assert outs[7]["reads"] == [{"ctx": ctx, "identities": [it["identity"] for it in items]}]
    assert all(o["action"].dtype == np.float32 and o["action"].shape == (4,) for o in outs)


def test_blocked_reads_or_the_control_take_the_ball_for_still() -> None:
    memory = MikasaVlaMemoryPolicy(max_batch=1)
    run_intercept(memory, Proxy(), 8)
    assert memory._balls[0].controller.phase == "block"
    blocked = MikasaVlaMemoryPolicy(max_batch=1)
    outs = run_intercept(blocked, Proxy("blocked"), 8)
    assert blocked._balls[0].controller.phase == "push" and outs[7]["decisionLogits"].tolist() == [0.0, 0.0]
    control, proxy = MikasaVlaNoMemoryPolicy(max_batch=1), Proxy()
    outs = run_intercept(control, proxy, 8)
    assert len(proxy.calls) == 8 and control._balls[0].controller.phase == "push"  # same reads, ignored
    assert outs[7]["decisionLogits"].tolist() == pytest.approx(V, abs=1e-6)


def test_a_donors_positions_are_what_it_then_believes() -> None:
    still = np.array([[-0.3, 0.1, 0.02, t] for t in range(RECENT)], np.float32)
    outs = run_intercept(MikasaVlaMemoryPolicy(max_batch=1), Proxy("donor", still), 2)
    # at t = 1 the read returns the donor's position at t = 0: the velocity is taken from it and the current position
    assert outs[1]["decisionLogits"].tolist() == pytest.approx([(-0.2 + V[0] + 0.3), (-0.8 + V[1] - 0.1)], abs=1e-6)


def test_bad_observations_and_unknown_tasks_are_refused_in_one_line() -> None:
    policy = MikasaVlaMemoryPolicy(max_batch=2)
    policy.reset(0, "e")
    with pytest.raises(AdapterError, match=r"neither 'cubes'/'image' \(RememberColor\) nor 'ball'"):
        policy.infer(0, {"joints": np.zeros(7, np.float32)}, Proxy())
    with pytest.raises(AdapterError, match=r"obs.goal must be a float \[≥3\]"):
        policy.infer(0, {"joints": np.zeros(7, np.float32), "ball": np.zeros(3, np.float32)}, Proxy())
    with pytest.raises(AdapterError, match="slot 1 was not reset"):
        policy.infer(1, rolling(0), Proxy())
    policy.reset(0, "e")
    policy.infer(0, rolling(0), Proxy())
    with pytest.raises(AdapterError, match=r"read item 0 has no \[4\] 'ball' leaf"):
        policy.infer(0, rolling(1), Proxy("donor", np.zeros((RECENT, 3), np.float32)))


def test_served_by_the_host_with_its_identity() -> None:
    served = load_policies("imep_sim_bridge.mikasa_vla_policy")
    assert served["mikasa-vla-memory"] is MikasaVlaMemoryPolicy and served["mikasa-vla-no-memory"] is MikasaVlaNoMemoryPolicy
    assert sorted(POLICIES) == ["mikasa-vla-memory", "mikasa-vla-no-memory"]
    ident = policy_identity(MikasaVlaMemoryPolicy(max_batch=1))
    assert ident["memory"] == {"bank": "episode-local", "banks": ["perceptual"], "k": 8}
    assert [f["path"] for f in ident["files"]] == [
        "imep_sim_bridge/cube_vision.py",
        "imep_sim_bridge/intercept_controller.py",
        "imep_sim_bridge/mikasa_vla_policy.py",
        "imep_sim_bridge/remember_color_policy.py",
    ]


@pytest.fixture
def colour_env(monkeypatch):
    mods, _torch, _gym = mikasa_fake.modules()
    install(monkeypatch, mods)
    return MikasaAdapter().make("mikasa/RememberColor3-VLA-v0", STATE)


@pytest.mark.parametrize("name", ["mikasa-vla-memory", "mikasa-vla-no-memory"])
def test_remembercolor_observations_get_the_remember_color_policys_actions(colour_env, name) -> None:
    """Step for step the same output as remember-color-memory / -no-memory (the fake's RememberColor3-VLA)."""
    reference = {"mikasa-vla-memory": "remember-color-memory", "mikasa-vla-no-memory": "remember-color-no-memory"}[name]
    spec = colour_env.spec()
    for seed in (1, 2):
        ours, theirs = POLICIES[name](max_batch=1), load_policies(None)[reference](max_batch=1)
        assert isinstance(theirs, RememberColorMemoryPolicy)
        obs, _ = split(spec, colour_env.reset(seed, {}, None).fields)
        ours.reset(0, "e")
        theirs.reset(0, "e")
        while True:
            a, b = ours.infer(0, obs, Proxy()), theirs.infer(0, obs, Proxy())
            assert a["action"].tolist() == b["action"].tolist() and a["reads"] == b["reads"]
            raw = colour_env.step(a["action"])
            obs, _ = split(spec, raw.fields)
            if raw.done:
                break
