"""EnvSpec facts (PROTOCOL.md, "Facts"), the seeds a spec declares, and replay branches (PROTOCOL.md, "Replay files")."""

from __future__ import annotations

import numpy as np
import pytest

from imep_sim_bridge.adapters.replay import ReplayEnv, seed_ranges, write_replay
from imep_sim_bridge.errors import BadAction
from imep_sim_bridge.spec import ActionSpec, EnvSpec, FactSpec, FieldSpec


def _spec(**over):
    base = dict(
        id="t",
        max_steps=10,
        action=ActionSpec((1,), "float32"),
        observation={"obs": FieldSpec((1,), "float32"), "cup": FieldSpec((), "int32"), "success": FieldSpec((), "bool")},
        method_visible=("obs",),
        evaluator_only=("cup", "success"),
    )
    base.update(over)
    return EnvSpec(**base)


def test_fact_travels_on_the_wire_and_back() -> None:
    spec = _spec(fact=FactSpec("cup", (0, 1, 2)), decision_from_step=5)
    wire = spec.to_wire()
    assert wire["fact"] == {"field": "cup", "domain": [0, 1, 2]}
    assert wire["decisionFromStep"] == 5
    assert EnvSpec.from_wire(wire) == spec


def test_no_fact_sends_neither_field() -> None:
    wire = _spec().to_wire()
    assert "fact" not in wire and "decisionFromStep" not in wire
    back = EnvSpec.from_wire(wire)
    assert back.fact is None and back.decision_from_step == 0


@pytest.mark.parametrize(
    ("over", "says"),
    [
        ({"fact": FactSpec("obs", (0, 1))}, "must be evaluator-only"),
        ({"fact": FactSpec("nowhere", (0, 1))}, "must be evaluator-only"),
        ({"decision_from_step": 11}, "decision_from_step"),
        ({"decision_from_step": -1}, "decision_from_step"),
    ],
)
def test_bad_declarations_are_refused(over, says) -> None:
    with pytest.raises(ValueError, match=says):
        _spec(**over)


def test_declared_seeds_travel_on_the_wire_and_back() -> None:
    spec = _spec(seeds=((0, 3), (10, 10)))
    wire = spec.to_wire()
    assert wire["seeds"] == [{"start": 0, "end": 3}, {"start": 10, "end": 10}]
    assert EnvSpec.from_wire(wire) == spec
    assert "seeds" not in _spec().to_wire()


@pytest.mark.parametrize("seeds", [(), ((3, 2),), ((-1, 2),), ((0, 1, 2),), ((True, 2),)])
def test_bad_seed_ranges_are_refused(seeds) -> None:
    with pytest.raises(ValueError, match="seeds must be"):
        _spec(seeds=seeds)


def test_seed_ranges_are_runs_of_consecutive_seeds() -> None:
    assert seed_ranges([5, 1, 2, 3, 9, 2, 10]) == ((1, 3), (5, 5), (9, 10))


def test_a_replay_declares_the_seeds_it_has_recordings_of(tmp_path) -> None:
    # the recorded spec (from a simulator that took any seed) says nothing of seeds; the replay can play 4, 5 and 8 only
    episodes = [{"seed": s, "reset": _result(0.0, done=True), "steps": []} for s in (8, 4, 5, 4)]
    write_replay(tmp_path / "r.msgpack", _spec().to_wire(), episodes)
    env = ReplayEnv("replay/r", tmp_path / "r.msgpack")
    assert env.spec().seeds == ((4, 5), (8, 8))
    assert env.spec().to_wire()["seeds"] == [{"start": 4, "end": 5}, {"start": 8, "end": 8}]


@pytest.mark.parametrize(
    ("domain", "says"),
    [((0,), "at least two"), ((0, 0), "repeat"), ((0, 1.5), "integers or strings"), ((True, False), "integers or strings")],
)
def test_bad_domains_are_refused(domain, says) -> None:
    with pytest.raises(ValueError, match=says):
        FactSpec("cup", domain)


def _result(x: float, done: bool = False) -> dict:
    return {"obs": {"obs": np.array([x], np.float32)}, "evaluator": {"cup": np.int32(1)}, "done": done, "step": 0}


def test_replay_follows_the_branch_whose_actions_match(tmp_path) -> None:
    """Two recordings of seed 7 agree on step 0 and part ways at step 1; a third action matches neither."""
    a0, a1, b1 = (np.array([v], np.float32) for v in (0.0, 1.0, -1.0))
    episodes = [
        {"seed": 7, "reset": _result(0), "steps": [{"action": a0, "result": _result(10)}, {"action": a1, "result": _result(11, True)}]},
        {"seed": 7, "reset": _result(0), "steps": [{"action": a0, "result": _result(10)}, {"action": b1, "result": _result(-11, True)}]},
    ]
    path = write_replay(tmp_path / "two.msgpack", _spec(fact=FactSpec("cup", (0, 1, 2))).to_wire(), episodes)
    env = ReplayEnv("replay/two", path)
    assert env.spec().fact == FactSpec("cup", (0, 1, 2))
    for second, want in ((a1, 11.0), (b1, -11.0)):
        env.reset(7, {}, None)
        assert float(env.step(a0).fields["obs"][0]) == 10.0
        step = env.step(second)
        assert float(step.fields["obs"][0]) == want and step.done
    env.reset(7, {}, None)
    env.step(a0)
    with pytest.raises(BadAction, match=r"nor that of 1 other recording"):
        env.step(np.array([0.5], np.float32))
