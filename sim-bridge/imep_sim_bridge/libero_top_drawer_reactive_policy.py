"""`libero-top-drawer-reactive`: a memoryless scripted controller that succeeds on a standard LIBERO task,
`libero/libero_90/7` (KITCHEN_SCENE1_open_the_top_drawer_of_the_cabinet), from the robot's own state only:

    python3 -m imep_sim_bridge.policy_host --endpoint E --policy libero-top-drawer-reactive \\
        --module imep_sim_bridge.libero_top_drawer_reactive_policy

Its action is a function of the current method-visible `state` alone (openpi's 8 floats: eef position, eef
axis-angle, finger joints): no memory reads (`reads` is always empty, no bank), nothing kept between steps. What it
knows of the scene is two constants of the task: `HANDLE`, the top drawer's handle bar (world position, the mean over
the task's 50 init states after LIBERO's 10 settling steps; it varies by about ±1 cm in x and y between them), and
`HOOK`, the hand pose of the hook grasp of libero_chain_controller.py (the gripper turned 90° about the vertical and
pitched 45° toward the cabinet, closed) applied to the mean start orientation. Every step it picks its target from
where the hand is relative to `HANDLE` (d = eef − HANDLE):

* hooked (d_z < 2.4 cm, within 3 cm in x): pull toward the robot (+y), holding the hand low — the closed
  fingertips rest on the bar at d_z ≈ 1.7–1.9 cm while it drags the drawer out (measured);
* not turned into the hook pose yet, or not above the gap behind the bar: go to 8 cm above that gap;
* above the gap: go down, leaning toward the bar's back so the fingertips slide into the gap.

Actions are LIBERO's OSC_POSE deltas scaled to [−1, 1] (libero_chain_controller.action: 1 ↔ 5 cm, 0.5 rad per
step), gripper closed. Measured (docs/simulators/libero.md): the drawer opens (LIBERO's own success) from 44 of the
task's 50 init states; where it fails the fingertips stop on the cabinet above the gap (the handle sits ~1 cm off
`HANDLE`) and it stays there until the horizon. Other tasks: it does nothing useful (use `libero-hold` there).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .errors import AdapterError
from .libero_chain_controller import action, axisangle_to_matrix, matrix_to_axisangle, target_rotation

#: The top drawer's handle bar in libero_90 task 7 (world metres): the mean over its 50 init states.
HANDLE = np.array([0.002, -0.1987, 1.0889])
#: The hook pose, from the mean start orientation (axis-angle) over the same init states.
HOOK = target_rotation(np.array([3.1404, 0.0002, -0.0884]))
HOOKED_Z = 0.024  # below this height above the bar's centre the fingertips are on/behind the bar
ROT_TOL = 0.08  # rad: turned into the hook pose
ABOVE_GAP = np.array([0.0, -0.016, 0.08])
INTO_GAP = np.array([0.0, 0.0, -0.008])


def hook_action(state: np.ndarray) -> np.ndarray:
    """The action for this state (see the module docstring); float64[7], gripper closed."""
    s = np.asarray(state, np.float64)
    d = s[:3] - HANDLE
    turned = float(np.linalg.norm(matrix_to_axisangle(HOOK @ axisangle_to_matrix(s[3:6]).T))) <= ROT_TOL
    if d[2] < HOOKED_Z and d[1] < 0.3 and abs(d[0]) < 0.03:
        target = np.array([HANDLE[0], s[1] + 0.05, HANDLE[2] - 0.01])  # pull toward the robot
    elif not turned or abs(d[0]) > 0.01 or not -0.03 <= d[1] <= 0.004:
        target = HANDLE + ABOVE_GAP
    else:
        target = HANDLE + INTO_GAP
    return action(s, target, HOOK)


class LiberoTopDrawerReactivePolicy:
    """The memoryless top-drawer opener (see the module docstring)."""

    name = "libero-top-drawer-reactive"
    version = "1"

    def __init__(self, max_batch: int = 64) -> None:
        self.max_batch = max_batch

    def _slot(self, slot: int) -> None:
        if not 0 <= slot < self.max_batch:
            raise AdapterError(f"{self.name}: slot {slot} is outside 0…{self.max_batch - 1}")

    def reset(self, slot: int, episode: str) -> None:
        self._slot(slot)

    def infer(self, slot: int, obs: dict[str, Any], memory: Any) -> dict[str, Any]:
        self._slot(slot)
        state = np.asarray(obs.get("state"), dtype=np.float64)
        if state.shape != (8,):
            raise AdapterError(f"{self.name}: obs.state must be LIBERO's 8-float state, got shape {list(state.shape)}")
        return {"action": hook_action(state).astype(np.float32), "reads": []}


POLICIES = {LiberoTopDrawerReactivePolicy.name: LiberoTopDrawerReactivePolicy}
