"""A LIBERO reset that keeps the model but nothing of the previous episode.

LIBERO builds its envs with robosuite's `hard_reset=True` (env_wrapper.py): every `reset()` reloads the
MJCF model and makes new robot and gripper objects, ~7 s on this CPU. The adapters that reuse one env
across episodes (`libero-mem/…`, `LIBERO-ChainDrawers-scripted`) pass `hard_reset=False`, so `reset()`
only calls `sim.reset()` and robosuite's `_reset_internal()`. That leaves one piece of the previous episode
behind: a gripper's `current_action` (robosuite/models/grippers/gripper_model.py sets it to zeros only in
`__init__`; `PandaGripper.format_action` integrates every gripper command into it, ±`speed` a step). A reset
after an episode that ended with the gripper closed therefore starts with the fingers still commanded
closed, and the observation at t = 0 after the settling steps differs from a fresh env's (max |diff| 2.1e-4
on the 8-value `state`, found on real LIBERO: the same seed gave other numbers depending on which episodes
the env had run before). `soft_reset` puts it back to what a freshly built gripper has, so a reset to a
seed gives the same observations whatever ran before (tests/test_libero_real.py checks the full MuJoCo
state and every field against a fresh env).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np


def _grippers(env: Any) -> Iterator[Any]:
    inner = getattr(env, "env", env)  # LIBERO's ControlEnv wraps the robosuite env as .env
    for robot in getattr(inner, "robots", ()):
        gripper = getattr(robot, "gripper", None)
        # bimanual robots keep one gripper per arm in a dict
        for g in gripper.values() if isinstance(gripper, dict) else (gripper,):
            if g is not None and hasattr(g, "current_action"):
                yield g


def soft_reset(env: Any) -> None:
    """`env.reset()` of a `hard_reset=False` LIBERO env, then each gripper's command state as built."""
    env.reset()
    for g in _grippers(env):
        g.current_action = np.zeros(g.dof)
