"""Known-answer hosted policy for `libero-mem/top-drawer-cue` (serve with `policy_host --module imep_sim_bridge.libero_drawer_policy`).

`libero-drawer-memory` sees only the method-visible fields (`state`, `handle`, `cue`, `instruction`).

* Memory — bank `perceptual` (the cue as seen), k = 1. While the cue is shown (cue ≠ 0) it writes the one-hot cue (float32[2]:
  open, close) into its bank. From elapsed step CUE_STEPS on (the env's `decisionFromStep`) it reads
  the latest stored cue back through `memory.read` at every step (ctx.decisionStep = true, queryIndex =
  t + 1, candidateCount = entries stored) and acts on what the read returns: goal = argmax of the
  returned leaf, or `DEFAULT_GOAL` when the read returns nothing usable (reads blocked). Its memory use
  is known by construction: with reads intact it follows the cue; blocked, it always does
  DEFAULT_GOAL — right on exactly the units whose goal is DEFAULT_GOAL (half of them with seeds
  alternating goals: chance).
* Motor — a scripted operational-space controller on the robot's own proprioception (openpi's `state`:
  eef position, eef axis-angle, gripper qpos) toward the handle position seen at the decision step.
  Actions are LIBERO's OSC_POSE deltas scaled to [−1, 1] (1 ↔ 5 cm, 0.5 rad per step). It keeps the
  gripper turned 90° about the vertical from its pose at t = 0 (fingers closing across the handle bar).
  Open: above the handle, down onto it, close the gripper, pull 30 cm toward the robot (+y in the
  scene). Close: gripper shut, above a point 6 cm in front of the handle, down to handle height, push
  15 cm past the handle into the cabinet (−y). Waypoints and step counts were tuned on the real
  simulator (robosuite 1.4.0, MuJoCo 2.3.7); each phase lasts a fixed number of steps.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .codec import RawBitsArray
from .errors import AdapterError
from .memory_read import MemoryReadProxy

GOALS = ("open", "close")
CUE_STEPS = 5
DEFAULT_GOAL = "open"
POS_SCALE = 0.05  # OSC_POSE output_max for position (m per unit action)
ROT_SCALE = 0.5  # OSC_POSE output_max for rotation (rad per unit action)
YAW = np.pi / 2
#: (offset from the decision-time handle position, gripper action, steps) per goal.
PLANS: dict[str, tuple[tuple[tuple[float, float, float], float, int], ...]] = {
    "open": (((0.0, 0.0, 0.12), -1.0, 50), ((0.0, 0.0, 0.0), -1.0, 40), ((0.0, 0.0, 0.0), 1.0, 15), ((0.0, 0.3, 0.0), 1.0, 60)),
    "close": (((0.0, 0.06, 0.12), 1.0, 50), ((0.0, 0.06, 0.0), 1.0, 30), ((0.0, -0.15, 0.0), 1.0, 60)),
}


def axisangle_to_matrix(v: np.ndarray) -> np.ndarray:
    """Rodrigues: rotation matrix of the axis-angle vector v."""
    theta = float(np.linalg.norm(v))
    if theta < 1e-12:
        return np.eye(3)
    k = v / theta
    kx = np.array([[0.0, -k[2], k[1]], [k[2], 0.0, -k[0]], [-k[1], k[0], 0.0]])
    return np.eye(3) + np.sin(theta) * kx + (1.0 - np.cos(theta)) * (kx @ kx)


def matrix_to_axisangle(r: np.ndarray) -> np.ndarray:
    """Axis-angle vector of a rotation matrix (angle in [0, π])."""
    cos = float(np.clip((np.trace(r) - 1.0) / 2.0, -1.0, 1.0))
    theta = float(np.arccos(cos))
    if theta < 1e-9:
        return np.zeros(3)
    if np.pi - theta < 1e-6:  # axis from the symmetric part
        m = (r + np.eye(3)) / 2.0
        axis = m[:, int(np.argmax(np.diag(m)))]
        return axis / np.linalg.norm(axis) * theta
    w = np.array([r[2, 1] - r[1, 2], r[0, 2] - r[2, 0], r[1, 0] - r[0, 1]]) / (2.0 * np.sin(theta))
    return w * theta


def yaw_matrix(angle: float) -> np.ndarray:
    c, s = np.cos(angle), np.sin(angle)
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


class _Slot:
    def __init__(self) -> None:
        self.episode: str | None = None
        self.t = 0
        self.entries: list[tuple[int, np.ndarray]] = []  # (timestep, one-hot cue)
        self.target_rot: np.ndarray | None = None
        self.handle: np.ndarray | None = None  # the handle position at the decision step


def _leaf(obs: dict[str, Any], name: str, shape: tuple[int, ...]) -> np.ndarray:
    v = obs.get(name)
    if not isinstance(v, np.ndarray) or v.shape != shape:
        raise AdapterError(f"libero-drawer-memory: obs.{name} must be a {list(shape)} ndarray")
    return v.astype(np.float64)


class LiberoDrawerMemoryPolicy:
    name = "libero-drawer-memory"
    version = "1"
    bank = "perceptual"
    k = 1

    def __init__(self, max_batch: int = 64) -> None:
        self.max_batch = max_batch
        self._slots = [_Slot() for _ in range(max_batch)]

    def reset(self, slot: int, episode: str) -> None:
        self._slots[slot] = _Slot()
        self._slots[slot].episode = episode

    def _read_goal(self, s: _Slot, memory: MemoryReadProxy) -> tuple[str, dict[str, Any], list[dict[str, Any]], np.ndarray]:
        ep = s.episode
        assert ep is not None
        items = []
        if s.entries:
            index = len(s.entries) - 1  # the latest cue written
            timestep, cue = s.entries[index]
            items.append(
                {
                    "identity": {"slot": index, "scope": ep, "sourceEpisode": ep, "timestep": timestep, "version": 0},
                    "leaves": {"cue": cue.copy()},
                }
            )
        ctx = {"bank": self.bank, "scope": ep, "episode": ep, "queryIndex": s.t + 1, "decisionStep": True, "candidateCount": len(s.entries)}
        got = memory.read(self.bank, ctx, items)
        if len(got) > self.k:
            raise AdapterError(f"{self.name}: the read hook returned {len(got)} items, more than k = {self.k}")
        logits = np.zeros(2, np.float64)
        for i, item in enumerate(got):
            leaf = item["leaves"].get("cue")
            if isinstance(leaf, RawBitsArray):
                leaf = leaf.to_float32()
            if not isinstance(leaf, np.ndarray) or leaf.shape != (2,):
                raise AdapterError(f"{self.name}: read item {i} has no [2] 'cue' leaf")
            logits += leaf.astype(np.float64)
        goal = GOALS[int(np.argmax(logits))] if float(np.abs(logits).sum()) > 0 else DEFAULT_GOAL
        return goal, ctx, got, logits

    def _action(self, s: _Slot, goal: str, state: np.ndarray, since_decision: int) -> np.ndarray:
        assert s.handle is not None and s.target_rot is not None
        action = np.zeros(7, np.float64)
        elapsed = since_decision
        for offset, grip, steps in PLANS[goal]:
            if elapsed < steps:
                break
            elapsed -= steps
        target = s.handle + np.asarray(offset)
        action[:3] = np.clip((target - state[:3]) / POS_SCALE, -1.0, 1.0)
        err = matrix_to_axisangle(s.target_rot @ axisangle_to_matrix(state[3:6]).T)
        action[3:6] = np.clip(err / ROT_SCALE, -1.0, 1.0)
        action[6] = grip
        return action

    def infer(self, slot: int, obs: dict[str, Any], memory: MemoryReadProxy) -> dict[str, Any]:
        s = self._slots[slot]
        if s.episode is None:
            raise AdapterError(f"{self.name}: slot {slot} was not reset")
        state = _leaf(obs, "state", (8,))
        handle = _leaf(obs, "handle", (3,))
        cue = obs.get("cue")
        cue = int(cue) if isinstance(cue, (int, np.integer)) else 0
        if s.t == 0:
            s.target_rot = yaw_matrix(YAW) @ axisangle_to_matrix(state[3:6])
        reads: list[dict[str, Any]] = []
        logits = np.zeros(2, np.float64)
        action = np.zeros(7, np.float64)
        action[6] = -1.0  # hold still, gripper open, while the cue is shown
        if s.t >= CUE_STEPS:
            if s.handle is None:
                s.handle = handle.copy()
            goal, ctx, got, logits = self._read_goal(s, memory)
            reads.append({"ctx": ctx, "identities": [dict(item["identity"]) for item in got]})
            action = self._action(s, goal, state, s.t - CUE_STEPS)
        if cue in (1, 2):  # write after reading
            s.entries.append((s.t, np.eye(2, dtype=np.float32)[cue - 1]))
        s.t += 1
        return {"action": action.astype(np.float32), "decisionLogits": logits.astype(np.float32), "reads": reads}


POLICIES = {LiberoDrawerMemoryPolicy.name: LiberoDrawerMemoryPolicy}
