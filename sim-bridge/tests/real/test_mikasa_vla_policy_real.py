"""mikasa-vla-memory vs its reads blocked vs mikasa-vla-no-memory on the real MIKASA-Robo-VLA tasks (CPU PhysX),
in process, on fixed seeds: InterceptMedium-VLA (the ball's velocity only from remembered positions) and
RememberColor5/9-VLA (the cue colour only from the bank).

Run with the venv's python: `cd sim-bridge && IMEP_REAL_MIKASA=1 ../.venvs/mikasa/bin/python -m pytest -q
tests/real/test_mikasa_vla_policy_real.py` (≈ 1 min). Skipped when mani_skill is not importable, unless IMEP_REAL_MIKASA=1.
Measured over more seeds (650000-650069 / 650000-650029) in the report of the branch that added these policies.
"""

from __future__ import annotations

from typing import Any

import pytest
from mikasa_gate import require_mani_skill

require_mani_skill()

from imep_sim_bridge.adapters.mikasa import MikasaAdapter  # noqa: E402 - after the module-level skip when mani_skill is absent
from imep_sim_bridge.mikasa_vla_policy import POLICIES  # noqa: E402 - after the module-level skip when mani_skill is absent
from imep_sim_bridge.spec import split  # noqa: E402 - after the module-level skip when mani_skill is absent

STATE = {"obs_mode": "state", "sim_backend": "cpu", "control_mode": "pd_ee_delta_pos"}
#: Intercept seeds on which the memory policy succeeds in process here (it wins 58 of 650000-650069)
INTERCEPT_SEEDS = (650000, 650001, 650002, 650004)


class Memory:
    """memory.read answered intact, or blocked (IMEP's N_blk: no records)."""

    def __init__(self, block: bool) -> None:
        self.block = block
        self.reads = 0

    def read(self, bank: str, ctx: dict[str, Any], items: list[dict[str, Any]]) -> list[dict[str, Any]]:
        self.reads += 1
        return [] if self.block else items


def episodes(task: str, seeds: tuple[int, ...]) -> dict[str, list[dict[str, Any]]]:
    """Final evaluator fields per arm: A (memory, reads intact), N_blk (memory, reads blocked), C (no-memory control)."""
    env = MikasaAdapter().make(f"mikasa/{task}", STATE)
    arms = {"A": ("mikasa-vla-memory", False), "N_blk": ("mikasa-vla-memory", True), "C": ("mikasa-vla-no-memory", False)}
    out: dict[str, list[dict[str, Any]]] = {arm: [] for arm in arms}
    try:
        spec = env.spec()
        for arm, (name, block) in arms.items():
            for seed in seeds:
                policy, memory = POLICIES[name](max_batch=1), Memory(block)
                obs, ev = split(spec, env.reset(seed, {}, None).fields)
                policy.reset(0, f"{arm}-{seed}")
                while True:
                    raw = env.step(policy.infer(0, obs, memory)["action"])
                    obs, ev = split(spec, raw.fields)
                    if raw.done:
                        break
                assert memory.reads > 0
                out[arm].append(ev)
    finally:
        env.close()
    return out


def test_intercept_needs_the_remembered_ball_positions() -> None:
    runs = episodes("InterceptMedium-VLA-v0", INTERCEPT_SEEDS)
    won = {arm: [bool(ev["success"]) for ev in evs] for arm, evs in runs.items()}
    assert sum(won["A"]) >= 3, won  # physics may differ by a hair elsewhere: one miss allowed
    assert not any(won["N_blk"]) and not any(won["C"]), won


@pytest.mark.parametrize("task", ["RememberColor5-VLA-v0", "RememberColor9-VLA-v0"])
def test_remembercolor_needs_the_remembered_cue(task: str) -> None:
    runs = episodes(task, (650000, 650001, 650002))
    facts = [int(ev["oracle_color"]) for ev in runs["A"]]
    assert any(f != 0 for f in facts)  # colour 0, the memoryless default, is not the answer everywhere
    assert [bool(ev["success"]) for ev in runs["A"]] == [True] * 3
    for arm in ("N_blk", "C"):
        assert [bool(ev["success"]) for ev in runs[arm]] == [f == 0 for f in facts], arm
