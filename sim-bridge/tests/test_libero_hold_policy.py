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
