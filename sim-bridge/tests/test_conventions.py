"""The conventions an adapter declares in its EnvSpec (PROTOCOL.md, "Conventions"): the wire shape, the checks
EnvSpec makes, what LIBERO and MIKASA declare — and, where the simulator's own source is installed (the libero and
mikasa venvs), that it says what the declaration says (robosuite: −1 open, +1 close; ManiSkill's panda gripper:
−1 closed, +1 open)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from fakes import mikasa_fake
from fakes.common import install
from imep_sim_bridge.adapters.mikasa import MikasaAdapter
from imep_sim_bridge.conventions import LIBERO_ACTION, libero_conventions, mikasa_conventions
from imep_sim_bridge.spec import ActionSpec, Component, Conventions, EnvSpec, FieldSpec


def _spec(conventions: Conventions | None, shape: tuple[int, ...] = (7,)) -> EnvSpec:
    return EnvSpec(
        id="t",
        max_steps=5,
        action=ActionSpec(shape=shape, dtype="float32", low=-1.0, high=1.0),
        observation={"state": FieldSpec((8,), "float32"), "success": FieldSpec((), "bool")},
        method_visible=("state",),
        evaluator_only=("success",),
        conventions=conventions,
    )


def test_conventions_go_over_the_wire_and_back() -> None:
    c = Conventions(action=LIBERO_ACTION, observation=(Component("state", 8, "eef_pos3_axisangle3_gripper2", field="state"),))
    wire = _spec(c).to_wire()
    assert wire["conventions"]["action"][2] == {
        "name": "gripper",
        "dims": 1,
        "format": "binary_close_positive",
        "range": [-1.0, 1.0],
        "description": "robosuite: −1 open, +1 close",
    }
    assert wire["conventions"]["observation"] == [{"name": "state", "dims": 8, "format": "eef_pos3_axisangle3_gripper2", "field": "state"}]
    assert EnvSpec.from_wire(wire) == _spec(c)
    assert "conventions" not in _spec(None).to_wire()  # absent: the wire spec is what it was


def test_envspec_refuses_conventions_that_do_not_cover_the_action_or_name_hidden_fields() -> None:
    with pytest.raises(ValueError, match="the action conventions cover 7 entries but the action shape \\[8\\] holds 8"):
        _spec(libero_conventions(wrist=False), shape=(8,))
    with pytest.raises(ValueError, match="not method-visible: \\['success'\\]"):
        _spec(Conventions(action=LIBERO_ACTION, observation=(Component("done", 1, "flag", field="success"),)))
    with pytest.raises(ValueError, match="range must be"):
        Component("gripper", 1, "binary_close_positive", (1.0, -1.0))


def test_a_component_checks_values_with_vla_evals_tolerance() -> None:
    gripper = LIBERO_ACTION[2]
    assert gripper.out_of_range([1.005]) is None
    assert gripper.out_of_range([1.5]) == "gripper: values outside [-1.0, 1.0]"
    assert gripper.out_of_range([float("nan")]) == "gripper: contains NaN/Inf"


def test_libero_declares_osc_pose_delta_xyz_axis_angle_and_a_close_positive_gripper() -> None:
    wire = libero_conventions().to_wire()
    assert [(c["name"], c["dims"], c["format"]) for c in wire["action"]] == [
        ("position", 3, "delta_xyz"),
        ("rotation", 3, "axis_angle"),
        ("gripper", 1, "binary_close_positive"),
    ]
    assert [(c["name"], c.get("field")) for c in wire["observation"]] == [
        ("image", "image"),
        ("wrist_image", "wrist_image"),
        ("state", "state"),
        ("language", "instruction"),
    ]


@pytest.fixture
def world(monkeypatch):
    mods, torch, gym = mikasa_fake.modules()
    install(monkeypatch, mods)
    gym.assets.downloaded.add("ycb")
    return torch, gym


def test_mikasa_declares_by_control_mode_and_a_close_negative_gripper(world) -> None:
    spec = MikasaAdapter().make("mikasa/RememberColor3-VLA-v0", {}).spec()
    assert spec.conventions is not None
    action = [(c.name, c.dims, c.format) for c in spec.conventions.action]
    assert action == [("joints", 7, "delta_joint_pos"), ("gripper", 1, "binary_close_negative")]
    observation = {c.field: (c.name, c.format) for c in spec.conventions.observation}
    assert set(observation) <= set(spec.method_visible)
    assert observation["image"] == ("image", "rgb_hwc_uint8")
    assert observation["joints"] == ("state", "tcp_pose7_qpos9_qvel9")
    ee = MikasaAdapter().make("mikasa/RememberColor3-VLA-v0", {"control_mode": "pd_ee_delta_pos"}).spec()
    assert ee.conventions is not None
    assert [(c.name, c.format) for c in ee.conventions.action] == [("position", "delta_xyz"), ("gripper", "binary_close_negative")]
    # a mode the adapter does not declare, or a robot whose action is not arm + 1 gripper entry: none declared
    assert mikasa_conventions("pd_joint_vel", 8, ()) is None
    assert mikasa_conventions("pd_joint_delta_pos", 9, ()) is None


def _installed(relative: str) -> Path | None:
    for root in sys.path:
        p = Path(root) / relative
        if p.is_file():
            return p
    return None


def test_robosuite_says_minus_one_opens_and_plus_one_closes() -> None:
    src = _installed("robosuite/models/grippers/panda_gripper.py")
    osc = _installed("robosuite/controllers/osc.py")
    if src is None or osc is None:
        pytest.skip("robosuite is not installed here (the libero venv has it: bash scripts/setup-sims.sh libero)")
    assert "-1 => open, 1 => closed" in src.read_text()
    assert "axisangle2quat(delta[3:6])" in osc.read_text()


def test_maniskill_panda_gripper_is_an_absolute_target_closed_at_minus_one() -> None:
    src = _installed("mani_skill/agents/robots/panda/panda.py")
    if src is None:
        pytest.skip("mani_skill is not installed here (the mikasa venv has it: bash scripts/setup-sims.sh mikasa)")
    text = src.read_text()
    # lower (−1 normalized) is −0.01: the fingers closed; upper (+1) is 0.04: open
    assert "lower=-0.01,  # a trick to have force when the object is thin\n            upper=0.04," in text
    assert "pd_joint_delta_pos=dict(\n                arm=arm_pd_joint_delta_pos, gripper=gripper_pd_joint_pos" in text
