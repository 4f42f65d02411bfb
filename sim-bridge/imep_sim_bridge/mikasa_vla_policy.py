"""Known-answer hosted policies for MIKASA-Robo's standard VLA set (serve with `policy_host --module imep_sim_bridge.mikasa_vla_policy`).

One policy runs the whole suite (RememberColor3/5/9-VLA, InterceptMedium-VLA; obs_mode state, control_mode
pd_ee_delta_pos) and dispatches on the observation's method-visible fields (adapters/mikasa.py, mikasa_tasks.py):

* `cubes` (or `image` + camera) — RememberColor: `RememberColorMemoryPolicy` (remember_color_policy.py) as it is,
  whatever the number of colours C (its one-hot cue width comes from the observation).
* `ball` + `goal` — Intercept (mikasa_robo_suite/vla/memory_envs/intercept_vla.py): the ball's velocity is set once
  at reset and never shown; the policy sees positions only. Memory — bank `perceptual`: every step it reads (through
  `memory.read`) its most recent RECENT stored ball positions, each leaf `ball` = float32[4] (x, y, z, elapsed step),
  estimates the velocity by least squares over what the read returns plus the current position, then writes the
  current position (read before write). Motor — intercept_controller.py: block the ball on its predicted path near the
  goal's y, then push it onto the goal. With reads blocked (nothing returned) the estimate is zero: it takes the ball
  for still and chases it (it rolls away at ≈ 0.39 m/s).

`mikasa-vla-no-memory` is the negative control: the same controllers and the same reads (so IMEP's hooks see and
count them), but it ignores what they return — RememberColor as `RememberColorNoMemoryPolicy` (always colour 0),
Intercept with velocity zero. Its decisionLogits are those of the memory policy's read (what it would have used).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import cube_vision, intercept_controller, remember_color_policy
from .codec import RawBitsArray
from .errors import AdapterError
from .intercept_controller import InterceptController, action_toward, velocity
from .memory_read import MemoryReadProxy
from .remember_color_policy import RememberColorMemoryPolicy, RememberColorNoMemoryPolicy

#: Ball positions an Intercept read asks for (the most recent ones): enough for a velocity, short enough to see a stop.
RECENT = 4


class _BallSlot:
    def __init__(self) -> None:
        self.episode: str | None = None
        self.t = 0
        self.entries: list[np.ndarray] = []  # float32 [4]: x, y, z, elapsed step
        self.controller = InterceptController()


def _vector(obs: dict[str, Any], key: str, size: int, who: str) -> np.ndarray:
    value = obs.get(key)
    if isinstance(value, RawBitsArray):
        value = value.to_float32()
    if not isinstance(value, np.ndarray) or value.ndim != 1 or value.shape[0] < size:
        raise AdapterError(f"{who}: obs.{key} must be a float [≥{size}] ndarray")
    return value[:size].astype(np.float64)


class MikasaVlaMemoryPolicy:
    name = "mikasa-vla-memory"
    version = "1"
    bank = "perceptual"
    k = RememberColorMemoryPolicy.k  # the most items any read asks for (Intercept asks for RECENT ≤ k)
    #: False for the negative control: the reads are made (and intervened on) but their items are not used.
    uses_memory = True
    colour_policy: type[RememberColorMemoryPolicy] = RememberColorMemoryPolicy

    def __init__(self, max_batch: int = 64) -> None:
        self.max_batch = max_batch
        self._colour = self.colour_policy(max_batch=max_batch)
        self._balls = [_BallSlot() for _ in range(max_batch)]

    def identity_files(self) -> dict[str, str]:
        """The modules it is made of besides this one (precommit's policy identity)."""
        return {
            "imep_sim_bridge/cube_vision.py": str(cube_vision.__file__),
            "imep_sim_bridge/intercept_controller.py": str(intercept_controller.__file__),
            "imep_sim_bridge/remember_color_policy.py": str(remember_color_policy.__file__),
        }

    def reset(self, slot: int, episode: str) -> None:
        self._colour.reset(slot, episode)
        s = self._balls[slot]
        s.episode, s.t, s.entries, s.controller = episode, 0, [], InterceptController()

    def infer(self, slot: int, obs: dict[str, Any], memory: MemoryReadProxy) -> dict[str, Any]:
        if "cubes" in obs or "image" in obs:
            return self._colour.infer(slot, obs, memory)
        if "ball" in obs:
            return self._intercept(slot, obs, memory)
        raise AdapterError(f"{self.name}: the observation has neither 'cubes'/'image' (RememberColor) nor 'ball' (Intercept): {sorted(obs)}")

    def _read(self, s: _BallSlot, memory: MemoryReadProxy) -> tuple[list[np.ndarray], dict[str, Any], list[dict[str, Any]]]:
        ep = s.episode
        n = len(s.entries)
        chosen = list(range(n - 1, max(n - RECENT, 0) - 1, -1))  # most recent first
        items = [
            {
                "identity": {"slot": i, "scope": ep, "sourceEpisode": ep, "timestep": int(s.entries[i][3]), "version": 0},
                "leaves": {"ball": s.entries[i].copy()},
            }
            for i in chosen
        ]
        ctx = {"bank": self.bank, "scope": ep, "episode": ep, "queryIndex": s.t + 1, "decisionStep": True, "candidateCount": n}
        got = memory.read(self.bank, ctx, items)
        if len(got) > self.k:
            raise AdapterError(f"{self.name}: the read hook returned {len(got)} items, more than k = {self.k}")
        rows = []
        for i, item in enumerate(got):
            leaf = item["leaves"].get("ball")
            if isinstance(leaf, RawBitsArray):
                leaf = leaf.to_float32()
            if not isinstance(leaf, np.ndarray) or leaf.shape != (4,):
                raise AdapterError(f"{self.name}: read item {i} has no [4] 'ball' leaf (x, y, z, step)")
            rows.append(leaf.astype(np.float64))
        return rows, ctx, got

    def _intercept(self, slot: int, obs: dict[str, Any], memory: MemoryReadProxy) -> dict[str, Any]:
        s = self._balls[slot]
        if s.episode is None:
            raise AdapterError(f"{self.name}: slot {slot} was not reset")
        tcp = _vector(obs, "joints", 3, self.name)
        ball = _vector(obs, "ball", 3, self.name)
        goal = _vector(obs, "goal", 3, self.name)
        rows, ctx, got = self._read(s, memory)
        now = np.array([*ball, float(s.t)])
        estimate = velocity(np.array([*rows, now]))
        v = estimate if self.uses_memory else np.zeros(2)
        plan = s.controller.plan(s.t, tcp, ball, goal, v)
        s.entries.append(now.astype(np.float32))
        s.t += 1
        return {
            "action": action_toward(tcp, plan.target),
            "decisionLogits": estimate.astype(np.float32),
            "reads": [{"ctx": ctx, "identities": [dict(item["identity"]) for item in got]}],
        }


class MikasaVlaNoMemoryPolicy(MikasaVlaMemoryPolicy):
    """Negative control: the same reads, ignored (RememberColor: colour 0; Intercept: the ball taken for still)."""

    name = "mikasa-vla-no-memory"
    uses_memory = False
    colour_policy = RememberColorNoMemoryPolicy


POLICIES = {p.name: p for p in (MikasaVlaMemoryPolicy, MikasaVlaNoMemoryPolicy)}
