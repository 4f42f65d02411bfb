"""The MIKASA-Robo-VLA tasks of adapters/mikasa_tasks.py on the real stack (CPU PhysX, lavapipe): per task make,
reset, two steps; the fields the spec lists are there, the answer is evaluator-only, the fact is in its domain and
the decision step is the one the task's code gives (docs/simulators/mikasa-memory-types.md).

Run with the venv's python: `cd sim-bridge && IMEP_REAL_MIKASA=1 ../.venvs/mikasa/bin/python -m pytest -q
tests/real/test_mikasa_vla_tasks_real.py`. Skipped when mani_skill is not importable, unless IMEP_REAL_MIKASA=1.
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np
import pytest

REAL = os.environ.get("IMEP_REAL_MIKASA") == "1"
try:
    import mani_skill  # noqa: F401 - only whether it imports: skip the module otherwise
except ImportError:
    if REAL:
        raise
    pytest.skip("mani_skill is not installed (bash scripts/setup-sims.sh mikasa)", allow_module_level=True)

from imep_sim_bridge.adapters.mikasa import MikasaAdapter  # noqa: E402 - after the module-level skip when mani_skill is absent
from imep_sim_bridge.spec import split  # noqa: E402 - after the module-level skip when mani_skill is absent

CPU = {"sim_backend": "cpu", "control_mode": "pd_ee_delta_pos"}
#: task → (obs_mode, method-visible task fields {name: shape}, evaluator-only answer fields, fact field or None,
#: the decision step from the task's code as a function of the env instance)
CASES: dict[str, tuple[str, dict[str, tuple[int, ...]], tuple[str, ...], str | None, Any]] = {
    **{
        f"Intercept{s}-VLA-v0": ("state", {"ball": (3,), "goal": (3,)}, ("oracle_velocity",), None, lambda base: 1)
        for s in ("Slow", "Medium", "Fast")
    },
    **{
        f"RememberColor{n}-VLA-v0": (
            "state",
            {"cubes": (n, 4)},
            ("oracle_color", "oracle_info"),
            "oracle_color",
            lambda base: int(base.CUE_PHASE_STEPS[0]) + int(base.EMPTY_PHASE_STEPS[0]),
        )
        for n in (5, 9)
    },
}


@pytest.mark.parametrize("task", sorted(CASES))
def test_task_makes_resets_steps_and_hides_its_answer(task: str) -> None:
    mode, visible, answer, fact, decision = CASES[task]
    env = MikasaAdapter().make(f"mikasa/{task}", {**CPU, "obs_mode": mode})
    try:
        spec = env.spec()
        base = env._env.unwrapped
        for name, shape in visible.items():
            assert name in spec.method_visible and spec.observation[name].shape == shape, (task, name)
        for name in answer:
            assert name in spec.evaluator_only and name not in spec.method_visible, (task, name)
        assert "oracle_info" not in spec.method_visible
        assert (spec.fact.field if spec.fact else None) == fact
        raw = env.reset(7, {}, None)
        assert spec.decision_from_step == decision(base)
        for _ in range(2):
            raw = env.step(np.zeros(spec.action.shape, np.float32))
        obs, ev = split(spec, raw.fields)
        assert set(obs) == set(spec.method_visible) and set(ev) == set(spec.evaluator_only)
        for name in spec.method_visible:
            assert tuple(np.asarray(obs[name]).shape) == spec.observation[name].shape, (task, name)
        if spec.fact is not None:
            assert ev[spec.fact.field] in spec.fact.domain
        assert ev["elapsed_steps"] == 2
    finally:
        env.close()


def test_intercept_shows_positions_and_the_velocity_follows_from_two() -> None:
    """The ball moves at oracle_velocity between two observed positions (intercept_vla.py sets it once at reset)."""
    env = MikasaAdapter().make("mikasa/InterceptMedium-VLA-v0", {**CPU, "obs_mode": "state"})
    try:
        spec = env.spec()
        assert spec.fact is None and spec.to_wire().get("fact") is None
        first = split(spec, env.reset(3, {}, None).fields)
        second = split(spec, env.step(np.zeros(spec.action.shape, np.float32)).fields)
        (obs0, ev0), (obs1, _) = first, second
        dt = 1.0 / env._env.unwrapped.control_freq
        vy = (obs1["ball"][1] - obs0["ball"][1]) / dt
        assert abs(vy - ev0["oracle_velocity"][1]) < 0.1 * ev0["oracle_velocity"][1]
        assert 0.5 <= ev0["oracle_velocity"][1] <= 0.75  # InterceptMedium's VELOCITY_RANGE
    finally:
        env.close()
