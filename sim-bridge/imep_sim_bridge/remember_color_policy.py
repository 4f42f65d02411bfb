"""A known-answer memory policy for MIKASA-Robo RememberColor (state observations), hosted by policy_host.

What it sees (method-visible fields of `mikasa/RememberColor{3,5,9}-VLA-v0`, sim-bridge/imep_sim_bridge/adapters/
mikasa.py): `joints` (tcp_pose, qpos, qvel) and either, with obs_mode "state", `cubes` [C, 4] — colour k's cube
position and 1 while it is on the table, zeros while MIKASA hides it — or, with obs_mode "rgb", `image` and the
base camera's calibration, from which it computes the same rows itself (cube_vision.py: colour segmentation and
back-projection onto the table). Never the oracle: during the cue phase one cube is visible — the colour shown —,
in the empty phase none, then all C candidates, which do not say which one is the target.

Each step t:
* cue (exactly one cube visible): write that colour, one-hot float32 [C], into this episode's bank;
  hover above the table centre.
* candidates (all C visible once; their positions are kept for the episode, since the arm may hide some of
  them from the camera as it reaches): read the bank through `memory.read` (the most recent k cue entries; IMEP's read
  hook may substitute, block or reorder them), logits = the sum of the one-hot leaves it gets back, and drive
  the tool centre point to just above the cube of colour argmax(logits) — of colour 0 when the read brought
  nothing back — with a proportional controller in ManiSkill's `pd_ee_delta_pos` action space
  ([dx, dy, dz, gripper], ±1 = ±0.1 m), which stops there (MIKASA's success: within 0.05 m and static).
* otherwise (empty phase): hover.

With its reads intact it reaches the remembered colour; with reads blocked it always goes to colour 0 (success
≈ 1/C over uniformly drawn targets). `remember-color-no-memory` is the negative control: the same policy, the
same reads, but it ignores what the reads return (always colour 0).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import cube_vision
from .codec import RawBitsArray
from .cube_vision import cubes_from_image
from .errors import AdapterError
from .memory_read import MemoryReadProxy

HOVER = np.array([0.0, 0.0, 0.15], np.float64)
#: Target height of the tool centre point above a cube's centre (cube half-size 0.02; success radius 0.05).
ABOVE_CUBE = 0.035
STEP_M = 0.1  # pd_ee_delta_pos: an action of ±1 moves the target ±0.1 m
GRIPPER_OPEN = 1.0
#: Colours looked for in an rgb frame (RememberColor3; the state observation says C itself).
COLOURS_RGB = 3


class _Slot:
    def __init__(self) -> None:
        self.episode: str | None = None
        self.t = 0
        self.cues: list[tuple[int, np.ndarray]] = []  # (timestep, one-hot colour)
        self.candidates: np.ndarray | None = None  # [C, 4] rows of the first frame showing all candidates


def move_to(tcp: np.ndarray, target: np.ndarray) -> np.ndarray:
    """pd_ee_delta_pos action [dx, dy, dz, gripper] (normalised) toward `target`, clipped to ±1."""
    delta = np.clip((target - tcp) / STEP_M, -1.0, 1.0)
    return np.array([*delta, GRIPPER_OPEN], np.float32)


class RememberColorMemoryPolicy:
    name = "remember-color-memory"
    version = "1"
    bank = "perceptual"
    k = 8
    #: False for the negative control: reads are made (and intervened on) but their items are not used.
    uses_memory = True

    def __init__(self, max_batch: int = 64) -> None:
        self.max_batch = max_batch
        self._slots = [_Slot() for _ in range(max_batch)]

    def identity_files(self) -> dict[str, str]:
        """The perception module it imports is part of what a campaign freezes (precommit's policy identity)."""
        return {"imep_sim_bridge/cube_vision.py": str(cube_vision.__file__)}

    def reset(self, slot: int, episode: str) -> None:
        s = self._slots[slot]
        s.episode, s.t, s.cues, s.candidates = episode, 0, [], None

    @staticmethod
    def _observation(obs: dict[str, Any]) -> tuple[np.ndarray, np.ndarray]:
        joints = obs.get("joints")
        if not isinstance(joints, np.ndarray) or joints.ndim != 1 or joints.shape[0] < 3:
            raise AdapterError("remember-color-memory: obs.joints must be a float [≥3] ndarray (tcp_pose first)")
        cubes = obs.get("cubes")
        if cubes is None and "image" in obs:
            image, k, rt = obs.get("image"), obs.get("camera_intrinsic"), obs.get("camera_extrinsic")
            if not isinstance(image, np.ndarray) or image.ndim != 3 or image.dtype != np.uint8:
                raise AdapterError("remember-color-memory: obs.image must be a uint8 [H, W, 3] ndarray")
            if not isinstance(k, np.ndarray) or k.shape != (3, 3) or not isinstance(rt, np.ndarray) or rt.shape != (3, 4):
                raise AdapterError("remember-color-memory: an rgb observation needs camera_intrinsic [3, 3] and camera_extrinsic [3, 4]")
            cubes = cubes_from_image(image, k, rt, COLOURS_RGB)
        if not isinstance(cubes, np.ndarray) or cubes.ndim != 2 or cubes.shape[1] != 4 or cubes.shape[0] < 2:
            raise AdapterError("remember-color-memory: obs.cubes must be a float [C, 4] ndarray (C ≥ 2), or give image + camera")
        return joints[:3].astype(np.float64), cubes.astype(np.float64)

    def _read(self, s: _Slot, memory: MemoryReadProxy, colours: int) -> tuple[np.ndarray, dict[str, Any], list[dict[str, Any]]]:
        ep = s.episode
        chosen = s.cues[-self.k :][::-1]  # most recent first
        items = [
            {
                "identity": {"slot": i, "scope": ep, "sourceEpisode": ep, "timestep": t, "version": 0},
                "leaves": {"colour": f.copy()},
            }
            for i, (t, f) in zip(range(len(s.cues) - 1, -1, -1), chosen)
        ]
        ctx = {"bank": self.bank, "scope": ep, "episode": ep, "queryIndex": s.t + 1, "decisionStep": True, "candidateCount": len(s.cues)}
        got = memory.read(self.bank, ctx, items)
        if len(got) > self.k:
            raise AdapterError(f"{self.name}: the read hook returned {len(got)} items, more than k = {self.k}")
        logits = np.zeros(colours, np.float64)
        for i, item in enumerate(got):
            leaf = item["leaves"].get("colour")
            if isinstance(leaf, RawBitsArray):
                leaf = leaf.to_float32()
            if not isinstance(leaf, np.ndarray) or leaf.shape != (colours,):
                raise AdapterError(f"{self.name}: read item {i} has no [{colours}] 'colour' leaf")
            logits += leaf.astype(np.float64)
        return logits, ctx, got

    def infer(self, slot: int, obs: dict[str, Any], memory: MemoryReadProxy) -> dict[str, Any]:
        s = self._slots[slot]
        if s.episode is None:
            raise AdapterError(f"{self.name}: slot {slot} was not reset")
        tcp, cubes = self._observation(obs)
        colours = cubes.shape[0]
        visible = cubes[:, 3] > 0.5
        reads: list[dict[str, Any]] = []
        logits = np.zeros(colours, np.float64)
        target = HOVER
        if s.candidates is None and bool(visible.all()):
            s.candidates = cubes.copy()
        if s.candidates is None and int(visible.sum()) == 1:  # the cue: the one colour shown
            s.cues.append((s.t, np.eye(colours, dtype=np.float32)[int(np.argmax(visible))]))
        elif s.candidates is not None:  # the candidates: choose from memory
            logits, ctx, got = self._read(s, memory, colours)
            reads.append({"ctx": ctx, "identities": [dict(item["identity"]) for item in got]})
            use = logits if self.uses_memory else np.zeros(colours)
            colour = int(np.argmax(use)) if float(use.sum()) > 0 else 0
            target = s.candidates[colour, :3] + np.array([0.0, 0.0, ABOVE_CUBE])
        s.t += 1
        return {"action": move_to(tcp, target), "decisionLogits": logits.astype(np.float32), "reads": reads}


class RememberColorNoMemoryPolicy(RememberColorMemoryPolicy):
    """Negative control: reads its bank like the memory policy, then ignores what it read (always colour 0)."""

    name = "remember-color-no-memory"
    uses_memory = False


POLICIES = {p.name: p for p in (RememberColorMemoryPolicy, RememberColorNoMemoryPolicy)}
