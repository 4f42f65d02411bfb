"""`libero-hold`: a memoryless control for any LIBERO task (the standard suites `libero/<suite>/<i>` and
`libero-mem/top-drawer-cue`), hosted like the other scripted policies:

    python3 -m imep_sim_bridge.policy_host --endpoint E --policy libero-hold --module imep_sim_bridge.libero_hold_policy

Every step it sends LIBERO's no-op: `[0, 0, 0, 0, 0, 0, -1]` — no end-effector motion (robosuite's OSC_POSE delta
controller, robosuite/controllers/osc.py, holds the current pose for a zero delta) and the gripper open
(robosuite/models/grippers/panda_gripper.py `PandaGripper.format_action`: "-1 => open, 1 => closed"); it is the
same action as LIBERO's warm-up `LIBERO_DUMMY_ACTION` (adapters/libero.py, from openpi's examples/libero/main.py).

It is honest and deterministic: it never reads memory (`reads` is always empty, it declares no bank), keeps no state
between steps, and its action depends on nothing it observes — so every condition (A, N, C, S, T, …) gives it the
same actions, and its success rate is the floor a memory policy's is compared with (measured: 0 on task 0 of each
standard suite and on libero_spatial/0's init states 0–1 under A, N_blk and C; docs/simulators/libero.md).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .errors import AdapterError

#: LIBERO's no-op: zero OSC delta (position, axis-angle), gripper open.
HOLD_ACTION = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0, -1.0)


class LiberoHoldPolicy:
    """The memoryless control (see the module docstring)."""

    name = "libero-hold"
    version = "1"

    def __init__(self, max_batch: int = 64) -> None:
        self.max_batch = max_batch

    def reset(self, slot: int, episode: str) -> None:
        if not 0 <= slot < self.max_batch:
            raise AdapterError(f"{self.name}: slot {slot} is outside 0…{self.max_batch - 1}")

    def infer(self, slot: int, obs: dict[str, Any], memory: Any) -> dict[str, Any]:
        if not 0 <= slot < self.max_batch:
            raise AdapterError(f"{self.name}: slot {slot} is outside 0…{self.max_batch - 1}")
        return {"action": np.asarray(HOLD_ACTION, dtype=np.float32), "reads": []}


POLICIES = {LiberoHoldPolicy.name: LiberoHoldPolicy}
