"""The MIKASA-Robo-VLA tasks of adapters/mikasa_tasks.py on the real stack (CPU PhysX, lavapipe): per task make,
reset, two steps; the fields the spec lists are there, the answer is evaluator-only, the fact is in its domain and
the decision step is the one the task's code gives (docs/simulators/mikasa-memory-types.md). Also: evaluator-only
frames in state mode, the lamp tasks' one-line refusal, and the YCB tasks with and without (a stand-in for) the asset.

    cd sim-bridge && IMEP_REAL_MIKASA=1 ../.venvs/mikasa/bin/python -m pytest -q tests/real/test_mikasa_vla_tasks_real.py

Skipped when mani_skill is not importable, unless IMEP_REAL_MIKASA=1 (then a missing stack fails).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from mikasa_gate import require_mani_skill

require_mani_skill()

from imep_sim_bridge.adapters.mikasa import MikasaAdapter  # noqa: E402 - after the module-level skip when mani_skill is absent
from imep_sim_bridge.errors import AdapterError  # noqa: E402 - after the module-level skip when mani_skill is absent
from imep_sim_bridge.spec import split  # noqa: E402 - after the module-level skip when mani_skill is absent

ROOT = Path(__file__).resolve().parents[2]
CPU = {"sim_backend": "cpu", "control_mode": "pd_ee_delta_pos"}
LAMP = {"lamp_bulb": "sphere"}


# The decision steps, re-derived here from each task's constants (the file each comes from in the comment).
def cue_empty(base: Any) -> int:  # remember_color_vla.py, find_imposter_color_vla.py, bunch_of_colors_vla.py
    return int(base.CUE_PHASE_STEPS[0]) + int(base.EMPTY_PHASE_STEPS[0])


def chain(base: Any) -> int:  # chain_of_colors_vla.py: cue_steps = step_dur × SEQUENCE_LENGTH
    return int(base.CUE_STEP_DURATION[0]) * int(base.SEQUENCE_LENGTH) + int(base.EMPTY_PHASE_STEPS[0])


def blink(base: Any) -> int:  # blink_count_button_press_vla.py: cue_steps = pre + Σ(on + off)
    return int(base.PRE_BLINK_OFF_STEPS[0]) + int(base.BLINK_COUNT_RANGE[0]) * (int(base.BLINK_ON_STEPS[0]) + int(base.BLINK_OFF_STEPS[0]))


def trace(base: Any) -> int:  # trace_shape_vla.py: cue_steps = pre_demo + NUM_WAYPOINTS × STEPS_PER_WAYPOINT
    return int(base.PRE_DEMO_STEPS[0]) + int(base.NUM_WAYPOINTS) * int(base.STEPS_PER_WAYPOINT)


#: state-mode tasks: task → (method-visible task fields {name: shape}, evaluator-only answer fields, fact field, decision)
STATE: dict[str, tuple[dict[str, tuple[int, ...]], tuple[str, ...], str | None, Any]] = {
    **{f"Intercept{s}-VLA-v0": ({"ball": (3,), "goal": (3,)}, ("oracle_velocity",), None, lambda _: 1) for s in ("Slow", "Medium", "Fast")},
    **{f"RememberColor{n}-VLA-v0": ({"cubes": (n, 4)}, ("oracle_color", "oracle_info"), "oracle_color", cue_empty) for n in (5, 9)},
    "FindImposterColor3-VLA-v0": ({"cubes": (3, 4)}, ("oracle_imposter", "oracle_info"), "oracle_imposter", cue_empty),
    "ChainOfColors3-VLA-v0": ({"cubes": (9, 4), "button": (3,)}, ("oracle_sequence", "oracle_info"), "oracle_sequence", chain),
    "BunchOfColors5-VLA-v0": ({"cubes": (9, 4), "button": (3,)}, ("oracle_set", "oracle_info"), "oracle_set", cue_empty),
}
#: rgb-only tasks (no state field carries their cue): task → (answer fields, fact field, decision, extra make kwargs)
RGB: dict[str, tuple[tuple[str, ...], str, Any, dict[str, Any]]] = {
    "TakeItBack-VLA-v0": (("oracle_slot", "oracle_start"), "oracle_slot", lambda _: 1, {}),
    "BlinkCountButtonPressEasy-VLA-v0": (("oracle_blinks",), "oracle_blinks", blink, LAMP),
    "GatherAndRecall3-VLA-v0": (("oracle_flash",), "oracle_flash", lambda base: 1 + int(base.FLASH_DURATION_STEPS[0]), LAMP),
    "TraceShapeMedium-VLA-v0": (("oracle_shape",), "oracle_shape", trace, LAMP),
    "BatteriesCheckerEasy-3-VLA-v0": (("oracle_working",), "oracle_working", lambda _: 1, LAMP),
}


def run_two_steps(
    task: str, kwargs: dict[str, Any], visible: dict[str, tuple[int, ...]], answer: tuple[str, ...], fact: str | None, decision: Any
) -> dict:
    env = MikasaAdapter().make(f"mikasa/{task}", {**CPU, **kwargs})
    try:
        spec = env.spec()
        for name, shape in visible.items():
            assert name in spec.method_visible and spec.observation[name].shape == shape, (task, name)
        for name in (*answer, "oracle_info"):
            assert name not in spec.method_visible, (task, name)
        assert set(answer) <= set(spec.evaluator_only), task
        assert (spec.fact.field if spec.fact else None) == fact
        raw = env.reset(7, {}, None)
        assert spec.decision_from_step == decision(env._env.unwrapped), task
        for _ in range(2):
            raw = env.step(np.zeros(spec.action.shape, np.float32))
        obs, ev = split(spec, raw.fields)
        assert set(obs) == set(spec.method_visible) and set(ev) == set(spec.evaluator_only)
        for name in spec.method_visible:
            assert tuple(np.asarray(obs[name]).shape) == spec.observation[name].shape, (task, name)
        if spec.fact is not None:
            assert ev[spec.fact.field] in spec.fact.domain and ev["oracle_info"] == ev[spec.fact.field]
        assert ev["elapsed_steps"] == 2
        return ev
    finally:
        env.close()


@pytest.mark.parametrize("task", sorted(STATE))
def test_state_task_makes_resets_steps_and_hides_its_answer(task: str) -> None:
    run_two_steps(task, {"obs_mode": "state"}, *STATE[task])


@pytest.mark.parametrize("task", sorted(RGB))
def test_rgb_task_makes_resets_steps_and_hides_its_answer(task: str) -> None:
    answer, fact, decision, extra = RGB[task]
    run_two_steps(task, {"obs_mode": "rgb", **extra}, {"image": (128, 128, 3)}, answer, fact, decision)


def test_intercept_shows_positions_and_the_velocity_follows_from_two() -> None:
    """The ball moves at oracle_velocity between two observed positions (intercept_vla.py sets it once at reset)."""
    env = MikasaAdapter().make("mikasa/InterceptMedium-VLA-v0", {**CPU, "obs_mode": "state"})
    try:
        spec = env.spec()
        assert spec.fact is None and spec.to_wire().get("fact") is None
        obs0, ev0 = split(spec, env.reset(3, {}, None).fields)
        obs1, _ = split(spec, env.step(np.zeros(spec.action.shape, np.float32)).fields)
        vy = (obs1["ball"][1] - obs0["ball"][1]) * env._env.unwrapped.control_freq
        assert abs(vy - ev0["oracle_velocity"][1]) < 0.1 * ev0["oracle_velocity"][1]
        assert 0.5 <= ev0["oracle_velocity"][1] <= 0.75  # InterceptMedium's VELOCITY_RANGE
    finally:
        env.close()


def test_state_frames_are_evaluator_only_base_camera_rgb() -> None:
    env = MikasaAdapter().make("mikasa/RememberColor3-VLA-v0", {**CPU, "obs_mode": "state", "frames": True})
    try:
        spec = env.spec()
        assert "frame" in spec.evaluator_only and "frame" not in spec.method_visible and spec.rgb_field() is None
        zero = np.zeros(spec.action.shape, np.float32)
        frames = [env.reset(3, {"frame": True, "attempt": 1}, None).fields["frame"]]
        first = env.step(zero).fields
        frames.append(first["frame"])
        for frame in frames:
            assert frame.shape == (128, 128, 3) and frame.dtype == np.uint8
            assert len(np.unique(frame.reshape(-1, 3), axis=0)) > 50  # a rendered scene, not a blank frame
        # an episode whose reset did not ask for the render carries a blank frame, and the same physics
        blank = env.reset(3, {"attempt": 1}, None).fields["frame"]
        again = env.step(zero).fields
        assert blank.shape == (128, 128, 3) and not blank.any() and not again["frame"].any()
        assert np.array_equal(again["joints"], first["joints"]) and np.array_equal(again["cubes"], first["cubes"])
        # only the registered steps are rendered (IMEP sends the protocol's frames.steps)
        at0 = env.reset(3, {"frame": [1], "attempt": 1}, None).fields["frame"]
        at1 = env.step(zero).fields["frame"]
        assert not at0.any() and np.array_equal(at1, frames[1])
    finally:
        env.close()


def test_lamp_tasks_without_a_bulb_mesh_are_refused_in_one_line() -> None:
    with pytest.raises(AdapterError) as info:
        MikasaAdapter().make("mikasa/BlinkCountButtonPressEasy-VLA-v0", {**CPU, "obs_mode": "rgb"})
    msg = info.value.message
    assert "mikasa_robo_suite/vla/utils/objects/low_poly_light_bulb.glb" in msg and "lamp_bulb" in msg and "\n" not in msg
    with pytest.raises(AdapterError, match="applies only to tasks with MIKASA's lamp"):
        MikasaAdapter().make("mikasa/RememberColor3-VLA-v0", {**CPU, "obs_mode": "state", **LAMP})


YCB = """
import json, sys
import numpy as np
from imep_sim_bridge.adapters.mikasa import MikasaAdapter
from imep_sim_bridge.errors import AdapterError
out = {}
for task in ("ShellGameTouch-VLA-v0", "ShellGameShuffleTouch-VLA-v0"):
    try:
        env = MikasaAdapter().make("mikasa/" + task, {"obs_mode": "rgb", "sim_backend": "cpu", "control_mode": "pd_ee_delta_pos"})
    except AdapterError as exc:
        out[task] = {"error": exc.message}
        continue
    spec = env.spec()
    raw = env.reset(7, {}, None)
    base = env._env.unwrapped
    for _ in range(2):
        raw = env.step(np.zeros(spec.action.shape, np.float32))
    out[task] = {"fact": spec.to_wire()["fact"], "value": raw.fields["oracle_cup"], "decision": spec.decision_from_step,
                 "cue": int(base.CUE_PHASE_STEPS[0]), "shuffle": int(getattr(base, "SHUFFLE_PHASE_STEPS", [0])[0]),
                 "visible": list(spec.method_visible)}
    env.close()
print(json.dumps(out))
"""


def ycb_run(asset_dir: Path) -> dict:
    env = {**os.environ, "MS_ASSET_DIR": str(asset_dir)}
    out = subprocess.run([sys.executable, "-c", YCB], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    lines = [ln for ln in out.stdout.splitlines() if ln.startswith("{")]
    assert lines, out.stdout + out.stderr
    return json.loads(lines[-1])


def test_ycb_tasks_without_the_asset_say_where_to_put_it_in_one_line(tmp_path) -> None:
    for task, result in ycb_run(tmp_path / "empty").items():
        msg = result["error"]
        assert msg.startswith(f"mikasa/{task}: needs ManiSkill asset(s) ycb at {tmp_path / 'empty'}/assets/mani_skill2_ycb")
        assert "(MS_ASSET_DIR)" in msg and "\n" not in msg


def test_ycb_tasks_declare_their_cup_and_decision_step_with_the_asset_in_place(tmp_path) -> None:
    """With a stand-in mug (tests/fixtures/stub_ycb.py: a box, not the YCB mesh) in the folder the refusal names."""
    sys.path.insert(0, str(ROOT / "tests" / "fixtures"))
    import stub_ycb

    results = ycb_run(stub_ycb.write(tmp_path / "assets"))
    touch, shuffle = results["ShellGameTouch-VLA-v0"], results["ShellGameShuffleTouch-VLA-v0"]
    for r in (touch, shuffle):
        assert r["fact"] == {"field": "oracle_cup", "domain": [0, 1, 2]} and r["value"] in (0, 1, 2)
        assert "oracle_cup" not in r["visible"] and "image" in r["visible"]
    assert touch["decision"] == touch["cue"]  # shell_game_touch_vla.py: the mugs cover the ball from CUE_PHASE_STEPS[0]
    assert shuffle["decision"] == shuffle["cue"] + shuffle["shuffle"]  # shell_game_shuffle_touch_vla.py: manip phase
