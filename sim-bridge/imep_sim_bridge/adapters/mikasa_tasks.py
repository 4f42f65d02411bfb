"""The MIKASA-Robo tasks the adapter hosts: per task its fact, decision step and state-mode fields, each read
from the task's own code in mikasa-robo-suite 1.0.0 (paths relative to site-packages/mikasa_robo_suite/).

A task's `fact` is a DISCRETE, finite attribute the env draws at reset (FactSpec: S/T donor swaps pair units by
it); a task whose memory is continuous (a velocity) declares none, and S/T are refused on it. Its `decision` is
the first elapsed step at which the policy needs what it saw earlier. Its `state` fields are what a camera would
show in `obs_mode: state` (method-visible); its `oracle` fields are the answer, evaluator-only, in every mode.
ManiSkill's own state observation (obs["extra"]) is never copied: MIKASA puts the answer there.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..spec import FieldSpec
from .base import unbatch

#: MIKASA hides a cube by lifting it to z = 1000; anything above this is not on the table.
HIDDEN_Z = 1.0


@dataclass(frozen=True)
class Field:
    """One observation field the adapter builds from `env.unwrapped` (never from ManiSkill's state observation)."""

    name: str
    spec: Callable[[Any], FieldSpec]
    read: Callable[[Any], np.ndarray]


@dataclass(frozen=True)
class Fact:
    """A discrete fact: `attr` on env.unwrapped after reset, published as the evaluator-only int64 `field`."""

    attr: str
    field: str
    domain: Callable[[Any], tuple[int, ...]]


@dataclass(frozen=True)
class Task:
    #: the registering submodule: mikasa_robo_suite.<module>.memory_envs
    module: str
    #: MIKASA-Robo-VLA's memory type (docs/simulators/mikasa-memory-types.md)
    memory_type: str
    decision: Callable[[Any], int]
    fact: Fact | None = None
    #: method-visible in obs_mode state (empty: state mode is refused — the cue is only in pixels)
    state: tuple[Field, ...] = ()
    #: evaluator-only, every obs mode
    oracle: tuple[Field, ...] = ()


def cube_rows(positions: Sequence[Any]) -> np.ndarray:
    """[C, 4] float32: (x, y, z, 1) for a cube on the table, zeros for one MIKASA has lifted out of view."""
    out = np.zeros((len(positions), 4), np.float32)
    for k, p in enumerate(positions):
        xyz = unbatch(p).astype(np.float32).reshape(-1)[:3]
        if float(xyz[2]) <= HIDDEN_Z:
            out[k, :3] = xyz
            out[k, 3] = 1.0
    return out


def _xyz(value: Any) -> np.ndarray:
    return unbatch(value).astype(np.float32).reshape(-1)[:3].copy()


def _vec3(_: Any) -> FieldSpec:
    return FieldSpec((3,), "float32")


# --- RememberColor (vla/memory_envs/remember_color_vla.py, rl/memory_envs/remember_color.py) -------------------
#: `cubes` [C, 4]: row k = colour k's cube (x, y, z, 1) when on the table, zeros while MIKASA hides it.
CUBES = Field(
    "cubes",
    lambda base: FieldSpec((len(base.cubes), 4), "float32"),
    lambda base: cube_rows([base.cubes[k].pose.p for k in sorted(base.cubes)]),
)
COLOR = Fact("true_color_indices", "oracle_color", lambda base: tuple(range(int(base.COLORS))))


def _color_vla_decision(base: Any) -> int:
    """remember_color_vla.py: the candidates come back after the cue and empty phases."""
    return int(base.CUE_PHASE_STEPS[0]) + int(base.EMPTY_PHASE_STEPS[0])


def _color_rl_decision(base: Any) -> int:
    """remember_color.py: cue until TIME_OFFSET, hidden for DELTA_TIME."""
    return int(base.TIME_OFFSET) + int(base.DELTA_TIME)


# --- ShellGame (rl/memory_envs/shell_game.py) --------------------------------------------------------------------
CUP = Fact("cup_with_ball_number", "oracle_cup", lambda _: (0, 1, 2))


def _shell_rl_decision(base: Any) -> int:
    """shell_game.py: the cups cover the ball at TIME_OFFSET."""
    return int(base.TIME_OFFSET)


# --- Intercept (vla/memory_envs/intercept_vla.py) ----------------------------------------------------------------
#: `_initialize_episode` sets the ball's linear velocity once (`initial_velocity`, kept as `oracle_info`); no
#: observation carries it in our state mode. Two positions (reset, then step 1) give it: memory is needed from 1.
BALL = Field("ball", _vec3, lambda base: _xyz(base.ball.pose.p))
GOAL = Field("goal", _vec3, lambda base: _xyz(base.goal_region.pose.p))
VELOCITY = Field("oracle_velocity", _vec3, lambda base: _xyz(base.oracle_info))


def _intercept_decision(_: Any) -> int:
    return 1


TASKS: dict[str, Task] = {
    **{f"RememberColor{n}-VLA-v0": Task("vla", "object", _color_vla_decision, COLOR, (CUBES,)) for n in (3, 5, 9)},
    **{f"RememberColor{n}-v0": Task("rl", "object", _color_rl_decision, COLOR, (CUBES,)) for n in (3, 5, 9)},
    **{f"ShellGame{k}-v0": Task("rl", "object", _shell_rl_decision, CUP) for k in ("Touch", "Push", "Pick")},
    **{f"Intercept{s}-VLA-v0": Task("vla", "spatial", _intercept_decision, None, (BALL, GOAL), (VELOCITY,)) for s in ("Slow", "Medium", "Fast")},
}
