"""The memoryless control `libero-hold` (libero_hold_policy.py): LIBERO's no-op every step, no reads, no bank, no
state — served by the policy host's `--module`. Its real episodes: tests/test_libero_suites_real.py."""

from __future__ import annotations

import numpy as np
import pytest

from imep_sim_bridge.errors import AdapterError
from imep_sim_bridge.libero_hold_policy import HOLD_ACTION, LiberoHoldPolicy
from imep_sim_bridge.policy_host import load_policies, policy_identity


class NoMemory:
    def read(self, *args, **kwargs):
        raise AssertionError("libero-hold must never read memory")


def test_the_host_serves_it_from_its_module_with_no_bank() -> None:
    policies = load_policies("imep_sim_bridge.libero_hold_policy")
    assert policies["libero-hold"] is LiberoHoldPolicy
    ident = policy_identity(LiberoHoldPolicy(max_batch=2))
    assert ident["version"] == "1" and ident["memory"] == {"bank": "episode-local"}  # no banks, no k: it reads none
    assert [f["path"] for f in ident["files"]] == ["imep_sim_bridge/libero_hold_policy.py"]


def test_every_action_is_libero_s_no_op_whatever_it_observes() -> None:
    policy = LiberoHoldPolicy(max_batch=2)
    rng = np.random.default_rng(0)
    for slot in (0, 1):
        policy.reset(slot, f"ep-{slot}")
        for t in range(4):
            obs = {"state": rng.normal(size=8).astype(np.float32), "image": rng.integers(0, 255, (8, 8, 3), dtype=np.uint8), "cue": t}
            out = policy.infer(slot, obs, NoMemory())
            assert out["reads"] == [] and out["action"].dtype == np.float32
            assert out["action"].tolist() == [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, -1.0] == list(HOLD_ACTION)  # gripper open
    with pytest.raises(AdapterError, match="slot 2 is outside 0…1"):
        policy.infer(2, {}, NoMemory())


# ---- libero-top-drawer-reactive (libero_top_drawer_reactive_policy.py): memoryless, from obs.state alone


def test_the_reactive_opener_is_served_from_its_module_and_reads_nothing() -> None:
    from imep_sim_bridge.libero_top_drawer_reactive_policy import LiberoTopDrawerReactivePolicy

    policies = load_policies("imep_sim_bridge.libero_top_drawer_reactive_policy")
    assert policies["libero-top-drawer-reactive"] is LiberoTopDrawerReactivePolicy
    ident = policy_identity(LiberoTopDrawerReactivePolicy(max_batch=1))
    assert ident["memory"] == {"bank": "episode-local"}
    assert [f["path"] for f in ident["files"]] == ["imep_sim_bridge/libero_top_drawer_reactive_policy.py"]


def test_the_reactive_opener_is_a_function_of_the_current_state() -> None:
    from imep_sim_bridge.libero_chain_controller import matrix_to_axisangle
    from imep_sim_bridge.libero_top_drawer_reactive_policy import HANDLE, HOOK, LiberoTopDrawerReactivePolicy

    hook = matrix_to_axisangle(HOOK)
    start = np.array([-0.207, 0.0, 1.176, 3.1404, 0.0002, -0.0884, 0.0387, -0.0387], np.float32)  # LIBERO's start
    hooked = np.concatenate([HANDLE + [0.0, -0.01, 0.018], hook, [0.0, 0.0]]).astype(np.float32)
    above_gap = np.concatenate([HANDLE + [0.0, -0.016, 0.06], hook, [0.0, 0.0]]).astype(np.float32)
    a, b = LiberoTopDrawerReactivePolicy(max_batch=2), LiberoTopDrawerReactivePolicy(max_batch=2)
    a.reset(0, "x")
    b.reset(1, "y")
    for state in (start, hooked, above_gap, hooked):  # no history: the same state, the same action, any slot
        out_a, out_b = a.infer(0, {"state": state}, NoMemory()), b.infer(1, {"state": state}, NoMemory())
        assert out_a["reads"] == [] and out_a["action"].tolist() == out_b["action"].tolist()
        assert out_a["action"].dtype == np.float32 and out_a["action"][6] == 1.0  # gripper closed: a hook
    assert a.infer(0, {"state": hooked}, NoMemory())["action"][1] > 0.9  # hooked: pull toward the robot (+y)
    assert a.infer(0, {"state": above_gap}, NoMemory())["action"][2] < 0  # above the gap: go down
    assert a.infer(0, {"state": start}, NoMemory())["action"][0] > 0  # from the start: toward the handle
    with pytest.raises(AdapterError, match=r"obs\.state must be LIBERO's 8-float state"):
        a.infer(0, {"state": np.zeros(3, np.float32)}, NoMemory())
