"""`libero-drawer-memory-reactive`: the expert of the learned drawer checkpoints' demonstrations.

The same known-answer policy as `libero-drawer-memory` (libero_drawer_policy.py: the same observations, the same
memory use — it writes the cue while it is shown, reads it back through `memory.read` from the decision step on and
follows what the read returns), with motion phases that end when the robot's own state has settled — a waypoint
reached or the arm stopped, the fingers stopped closing — instead of after fixed step counts. A learner that sees only
the state cannot tell a fixed-count dwell's "wait" steps from its "go" steps (they look the same), so the
demonstrations (scripts/checkpoints/record-real-demos.sh, docs/learned-policies.md) come from this variant; the
campaigns keep the fixed-count one, whose module is byte-frozen (its source is its hosted identity).
"""

from __future__ import annotations

import numpy as np

from .libero_drawer_policy import POS_SCALE, ROT_SCALE, LiberoDrawerMemoryPolicy, _Slot, axisangle_to_matrix, matrix_to_axisangle

#: Reactive plans: (offset from the decision-time handle position, gripper action, how the phase ends) per goal.
#: "reach": the end effector within REACH_M of the waypoint; "grasp": the fingers stopped closing; None: last phase.
REACH_M = 0.01
REACTIVE_PLANS: dict[str, tuple[tuple[tuple[float, float, float], float, str | None], ...]] = {
    "open": (((0.0, 0.0, 0.12), -1.0, "reach"), ((0.0, 0.0, 0.0), -1.0, "reach"), ((0.0, 0.0, 0.0), 1.0, "grasp"), ((0.0, 0.3, 0.0), 1.0, None)),
    "close": (((0.0, 0.06, 0.12), 1.0, "reach"), ((0.0, 0.06, 0.0), 1.0, "reach"), ((0.0, -0.15, 0.0), 1.0, None)),
}


class LiberoDrawerReactivePolicy(LiberoDrawerMemoryPolicy):
    """libero-drawer-memory with state-ended phases (see the module docstring)."""

    name = "libero-drawer-memory-reactive"

    def reset(self, slot: int, episode: str) -> None:
        super().reset(slot, episode)
        if not hasattr(self, "_phase"):
            self._phase: dict[int, tuple[int, int, np.ndarray | None]] = {}
        self._phase[slot] = (0, 0, None)  # (phase index, steps in it, state at the previous step)

    def _action(self, s: _Slot, goal: str, state: np.ndarray, since_decision: int) -> np.ndarray:
        assert s.handle is not None and s.target_rot is not None
        slot = next(i for i, x in enumerate(self._slots) if x is s)
        phase, steps, last = self._phase[slot]
        plan = REACTIVE_PLANS[goal]
        offset, grip, until = plan[phase]
        target = s.handle + np.asarray(offset)
        # settled: the arm (reach) or the fingers (grasp) stopped moving — a waypoint the hand cannot quite reach
        # (the handle bar under the fingers) ends its phase too
        moved = (
            None
            if last is None
            else float(np.abs(state[:3] - last[:3]).max() if until == "reach" else abs((state[6] - state[7]) - (last[6] - last[7])))
        )
        settled = steps >= 3 and moved is not None and moved < (5e-4 if until == "reach" else 1e-4)
        reached = until == "reach" and (float(np.linalg.norm(target - state[:3])) < REACH_M or settled)
        grasped = until == "grasp" and settled
        if (reached or grasped) and phase + 1 < len(plan):
            phase, steps = phase + 1, 0
            offset, grip, until = plan[phase]
            target = s.handle + np.asarray(offset)
        self._phase[slot] = (phase, steps + 1, state.copy())
        action = np.zeros(7, np.float64)
        action[:3] = np.clip((target - state[:3]) / POS_SCALE, -1.0, 1.0)
        err = matrix_to_axisangle(s.target_rot @ axisangle_to_matrix(state[3:6]).T)
        action[3:6] = np.clip(err / ROT_SCALE, -1.0, 1.0)
        action[6] = grip
        return action


POLICIES = {LiberoDrawerReactivePolicy.name: LiberoDrawerReactivePolicy}
