"""A policy with no bank of its own that is GIVEN its past frames (IMEP-owned history memory, docs/your-policy.md
"History memory owned by IMEP"): on ShellGameTouch-lite it heads for the cup under which its history window — never the
current frame — last showed the ball, and for the middle cup when its history shows none.

One function, `act`, used two ways, so the same policy can be compared across forms:
  * vla_eval_history_server.py serves it from an unmodified vla-eval model server (observation keys `frames`,
    `mask`, `state` — the protocol maps `history/rgb`, `history/mask`, `toolPosition` onto them);
  * `ShellHistoryPolicy` below is the same policy as a Python host class (`policy: { runtime: remote, … }`), given
    `history/rgb` and `history/mask` directly.
"""

from __future__ import annotations

from typing import Any

import numpy as np

CUP_X = (-0.5, 0.0, 0.5)  # src/sims/lite/shell-game.ts
CUP_Y = 0.25
BALL = (230, 20, 20)  # src/sims/lite/render.ts COLORS.ball
STEP = 0.06


def act(frames: np.ndarray, mask: np.ndarray, state: np.ndarray) -> np.ndarray:
    """The action [dx, dy] from the history frames [window, H, W, 3] (oldest first), its mask [window] and the tool's
    position: the newest past frame (the current one, last, excluded) showing the ball decides the cup."""
    frames = np.asarray(frames, np.float32)
    mask = np.asarray(mask, np.float32)
    state = np.asarray(state, np.float32).reshape(-1)
    cup = 1
    for k in range(frames.shape[0] - 1):
        if mask[k] != 1:
            continue
        f = np.floor(frames[k].astype(np.float64) + 0.5)
        hit = (f[..., 0] == BALL[0]) & (f[..., 1] == BALL[1]) & (f[..., 2] == BALL[2])
        if hit.any():
            col = float(np.nonzero(hit)[1].sum()) / float(hit.sum()) / frames.shape[2]
            cup = 0 if col < 1 / 3 else 1 if col < 2 / 3 else 2
    dx = min(STEP, max(-STEP, CUP_X[cup] - float(state[0])))
    dy = min(STEP, max(-STEP, CUP_Y - float(state[1])))
    return np.array([dx, dy], np.float32)


class ShellHistoryPolicy:
    """The same policy as a Python host class: no bank of its own (`bank = "history"`, reported in its identity)."""

    name = "shell-history"
    version = "1"
    bank = "history"

    def __init__(self, max_batch: int = 1) -> None:
        self.max_batch = max_batch

    def reset(self, slot: int, episode: str) -> None:
        pass  # nothing kept between steps: the history arrives with every observation

    def infer(self, slot: int, obs: dict[str, Any], memory: Any) -> dict[str, Any]:
        action = act(obs["history/rgb"], obs["history/mask"], obs["toolPosition"])
        return {"action": action, "reads": []}


POLICIES = {ShellHistoryPolicy.name: ShellHistoryPolicy}
