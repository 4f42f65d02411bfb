"""The MIKASA task table and the lamp-bulb stand-in without the real stack (the real envs: tests/real/test_mikasa_vla_tasks_real.py)."""

from __future__ import annotations

import types

import numpy as np
import pytest

from imep_sim_bridge.adapters import mikasa_runtime as runtime
from imep_sim_bridge.adapters.mikasa_tasks import BUNCH, CHAIN, START, TASKS, WORKING
from imep_sim_bridge.errors import AdapterError

MEMORY_TYPES = {"object", "spatial", "capacity", "temporal", "negative", "sequential", "procedural", "prospective", "tracking", "checklist"}


def test_every_memory_type_has_a_vla_task_and_every_fact_is_discrete() -> None:
    assert {t.memory_type for name, t in TASKS.items() if "VLA" in name} == MEMORY_TYPES
    for name, task in TASKS.items():
        assert task.memory_type in MEMORY_TYPES, name
        if name.startswith("Intercept"):
            assert task.fact is None and [f.name for f in task.oracle] == ["oracle_velocity"]


def test_sequence_and_set_facts_are_strings_over_every_ordering_or_subset() -> None:
    base = types.SimpleNamespace(COLORS=9, SEQUENCE_LENGTH=3, true_color_indices=np.array([[6, 5, 1]], np.uint8))
    assert len(CHAIN.domain(base)) == 9 * 8 * 7 and CHAIN.value(base) == "6-5-1" and CHAIN.dtype(base) == "string"
    assert CHAIN.value(base) in CHAIN.domain(base)
    five = types.SimpleNamespace(COLORS=9, SEQUENCE_LENGTH=5, true_color_indices=np.array([[8, 1, 5, 4, 6]], np.uint8))
    assert len(BUNCH.domain(five)) == 126 and BUNCH.value(five) == "1-4-5-6-8" and BUNCH.value(five) in BUNCH.domain(five)


@pytest.mark.parametrize(("y", "slot"), [(-0.1, -1), (-0.05, -1), (0.0, 0), (0.05, 0), (0.1, 1), (0.15, 1)])
def test_take_it_back_slot_from_the_start_position(y: float, slot: int) -> None:
    """take_it_back_vla.py: y = slot × 0.1 + U(0, 0.05), slot ∈ {−1, 0, 1}."""
    base = types.SimpleNamespace(oracle_info=np.array([[0.01, y, 0.001]], np.float32))
    assert START.value(base) == slot and slot in START.domain(base)


def test_batteries_working_slot_is_the_first_oracle_entry() -> None:
    base = types.SimpleNamespace(ACTIVE_BATTERY_COUNT=3, oracle_info=np.array([[2]], np.uint8))
    assert WORKING.value(base) == 2 and WORKING.domain(base) == (0, 1, 2)


@pytest.fixture
def shapes(tmp_path, monkeypatch):
    """A stand-in for mikasa_robo_suite.vla.utils.shapes whose folder has no objects/ (as the 1.0.0 wheel)."""
    monkeypatch.setattr(runtime, "_lamp_state", {})
    calls: list[dict] = []

    def build_color_switch_lamp(scene=None, bulb_radius: float = 0.012, bulb_asset_path=None, bulb_mesh_scale=0.85, bulb_z_offset=-0.07, **kw):
        calls.append({"bulb_radius": bulb_radius, "path": bulb_asset_path, "scale": bulb_mesh_scale, "z": bulb_z_offset})

    module = types.SimpleNamespace(__file__=str(tmp_path / "shapes.py"), build_color_switch_lamp=build_color_switch_lamp, calls=calls)
    return module


def test_a_lamp_task_without_the_bulb_mesh_is_refused_in_one_line(shapes) -> None:
    with pytest.raises(AdapterError) as info:
        runtime.use_lamp_bulb("mikasa/BlinkCountButtonPressEasy-VLA-v0", shapes, None)
    msg = info.value.message
    assert msg.startswith("mikasa/BlinkCountButtonPressEasy-VLA-v0: this task builds MIKASA's lamp")
    assert "vla/utils/objects/low_poly_light_bulb.glb" in msg and "lamp_bulb" in msg and "'sphere'" in msg and "\n" not in msg
    with pytest.raises(AdapterError, match="neither 'sphere' nor an existing .glb file"):
        runtime.use_lamp_bulb("mikasa/X", shapes, "/nonexistent/bulb.glb")


def test_the_sphere_stand_in_sits_where_the_collision_sphere_is(shapes) -> None:
    assert runtime.use_lamp_bulb("mikasa/X", shapes, "sphere") == "sphere"
    shapes.build_color_switch_lamp(scene=None, bulb_radius=0.02)
    (call,) = shapes.calls
    assert call["scale"] == 0.02 and call["z"] == 0.0 and call["path"].endswith("bulb_sphere.obj")
    lines = open(call["path"]).read().splitlines()
    verts = np.array([[float(v) for v in ln.split()[1:]] for ln in lines if ln.startswith("v ")])
    assert np.allclose(np.linalg.norm(verts, axis=1), 1.0, atol=1e-5)  # a unit sphere, scaled to the bulb's radius
    assert sum(ln.startswith("f ") for ln in lines) > 100
    assert runtime.use_lamp_bulb("mikasa/Y", shapes, "sphere") == "sphere"  # idempotent
    with pytest.raises(AdapterError, match="one lamp_bulb per server"):
        runtime.use_lamp_bulb("mikasa/Y", shapes, __file__)


def test_the_wheels_own_bulb_is_used_when_it_is_there(shapes, tmp_path) -> None:
    (tmp_path / "objects").mkdir()
    (tmp_path / "objects" / "low_poly_light_bulb.glb").write_bytes(b"glTF")
    assert runtime.use_lamp_bulb("mikasa/X", shapes, None) == "wheel"
