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
from itertools import combinations, permutations
from typing import Any

import numpy as np

from ..spec import FieldSpec
from .base import scalar, unbatch

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
    """A discrete fact read from env.unwrapped after reset (`attr` names where), published as the evaluator-only
    `field` (int64 for integer domains, string for tuples written "a-b-c"); `domain` lists every value it takes."""

    attr: str
    field: str
    domain: Callable[[Any], tuple[int, ...] | tuple[str, ...]]
    read: Callable[[Any], int | str] | None = None

    def value(self, base: Any) -> int | str:
        if self.read is not None:
            return self.read(base)
        return int(scalar(getattr(base, self.attr)))

    def dtype(self, base: Any) -> str:
        return "string" if isinstance(self.domain(base)[0], str) else "int64"


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
    #: builds MIKASA's colour-switch lamp, whose bulb mesh the 1.0.0 wheel lacks (make kwarg `lamp_bulb`)
    lamp: bool = False


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


def _shell_vla_decision(base: Any) -> int:
    """shell_game_touch_vla.py: the mugs are lifted out of view while elapsed < cue_steps_per_env, drawn per
    episode from CUE_PHASE_STEPS = [lo, hi]; they cover the ball from step lo at the earliest."""
    return int(base.CUE_PHASE_STEPS[0])


# --- Intercept (vla/memory_envs/intercept_vla.py) ----------------------------------------------------------------
#: `_initialize_episode` sets the ball's linear velocity once (`initial_velocity`, kept as `oracle_info`); no
#: observation carries it in our state mode. Two positions (reset, then step 1) give it: memory is needed from 1.
BALL = Field("ball", _vec3, lambda base: _xyz(base.ball.pose.p))
GOAL = Field("goal", _vec3, lambda base: _xyz(base.goal_region.pose.p))
VELOCITY = Field("oracle_velocity", _vec3, lambda base: _xyz(base.oracle_info))


def _intercept_decision(_: Any) -> int:
    return 1


# --- FindImposterColor (vla/memory_envs/find_imposter_color_vla.py) — negative ----------------------------------
#: `imposter_key` (choice over color_dict's keys): the colour left out of the cue and present among the candidates.
IMPOSTER = Fact("imposter_key", "oracle_imposter", lambda base: tuple(range(int(base.COLORS))))


# --- Colour sequences (vla/memory_envs/{chain,bunch,seq}_of_colors_vla.py) — sequential / capacity ---------------
def _indices(base: Any) -> list[int]:
    return [int(v) for v in unbatch(base.true_color_indices).reshape(-1)]


#: ChainOfColors: `true_color_indices` = SEQUENCE_LENGTH distinct colours (choice, replace=False), in cue order.
CHAIN = Fact(
    "true_color_indices",
    "oracle_sequence",
    lambda base: tuple("-".join(map(str, p)) for p in permutations(range(int(base.COLORS)), int(base.SEQUENCE_LENGTH))),
    lambda base: "-".join(map(str, _indices(base))),
)
#: BunchOfColors: the same draw, but only the set counts (success: touch every member, in any order).
BUNCH = Fact(
    "true_color_indices",
    "oracle_set",
    lambda base: tuple("-".join(map(str, c)) for c in combinations(range(int(base.COLORS)), int(base.SEQUENCE_LENGTH))),
    lambda base: "-".join(map(str, sorted(_indices(base)))),
)


#: the submit button both tasks require pressed for success: (x, y) of its base, z of its cap's top.
BUTTON = Field(
    "button",
    _vec3,
    lambda base: np.array([*unbatch(base.button_xy).reshape(-1)[:2], float(unbatch(base.button_top_z).reshape(-1)[0])], np.float32),
)


def _chain_decision(base: Any) -> int:
    """chain_of_colors_vla.py: cue = CUE_STEP_DURATION per item × SEQUENCE_LENGTH, then EMPTY_PHASE_STEPS."""
    return int(base.CUE_STEP_DURATION[0]) * int(base.SEQUENCE_LENGTH) + int(base.EMPTY_PHASE_STEPS[0])


# --- TakeItBack (vla/memory_envs/take_it_back_vla.py) — spatial -------------------------------------------------
#: `_initialize_episode`: initial_positions = choice([-1, 0, 1]); the start region's y = slot × 0.1 + U(0, 0.05)
#: (kept as `oracle_info` = xyz_initial). The region is in `_hidden_objects` (never rendered): only the cube's
#: position at reset shows it. The slot is the discrete part of the fact; the position is evaluator-only too.
def _start_slot(base: Any) -> int:
    y = float(unbatch(base.oracle_info).reshape(-1)[1])
    return int(np.floor(y / 0.1 + 0.25))  # slot k covers [0.1k, 0.1k + 0.05]


START = Fact("oracle_info", "oracle_slot", lambda _: (-1, 0, 1), _start_slot)
START_XYZ = Field("oracle_start", _vec3, lambda base: _xyz(base.oracle_info))


def _take_it_back_decision(_: Any) -> int:
    """The cube can leave its start from step 1 on; the return (after the goal switch) needs where it began."""
    return 1


# --- ShellGameShuffleTouch (vla/memory_envs/shell_game_shuffle_touch_vla.py) — tracking --------------------------
#: `oracle_info` = final_ball_slot: the slot the ball's cup ends in after the swaps.
FINAL_CUP = Fact("oracle_info", "oracle_cup", lambda _: (0, 1, 2))


def _shuffle_decision(base: Any) -> int:
    """The choice (manip phase) starts at cue + shuffle: CUE_PHASE_STEPS[0] + SHUFFLE_PHASE_STEPS[0] at the earliest."""
    return int(base.CUE_PHASE_STEPS[0]) + int(base.SHUFFLE_PHASE_STEPS[0])


# --- Lamp tasks (need the lamp's bulb mesh, which the 1.0.0 wheel lacks: mikasa_runtime.LAMP) ---------------------
#: blink_count_button_press_vla.py: target_blinks = randint(BLINK_COUNT_RANGE); presses count after the cue
#: (action_mask = elapsed >= cue_steps = pre + Σ(on + off) ≥ PRE_BLINK_OFF_STEPS[0] + lo × (ON[0] + OFF[0])).
BLINKS = Fact("target_blinks", "oracle_blinks", lambda base: tuple(range(int(base.BLINK_COUNT_RANGE[0]), int(base.BLINK_COUNT_RANGE[1]) + 1)))


def _blink_decision(base: Any) -> int:
    per_blink = int(base.BLINK_ON_STEPS[0]) + int(base.BLINK_OFF_STEPS[0])
    return int(base.PRE_BLINK_OFF_STEPS[0]) + int(base.BLINK_COUNT_RANGE[0]) * per_blink


#: gather_and_recall_vla.py: flash_color = randint(0, 3) (red, green, blue), flashed once while cubes are moved,
#: for FLASH_DURATION_STEPS; the matching button is pressed after the last cube lands.
FLASH = Fact("flash_color", "oracle_flash", lambda _: (0, 1, 2))


def _gather_decision(base: Any) -> int:
    """The flash starts at step ≥ 1 and stays on ≥ FLASH_DURATION_STEPS[0] steps: only after that is memory needed."""
    return 1 + int(base.FLASH_DURATION_STEPS[0])


#: trace_shape_vla.py: shape_type = AVAILABLE_SHAPES[randint]; the robot traces from cue_steps = pre_demo + demo on.
SHAPE = Fact("shape_type", "oracle_shape", lambda base: tuple(int(v) for v in base.AVAILABLE_SHAPES))


def _trace_decision(base: Any) -> int:
    return int(base.PRE_DEMO_STEPS[0]) + int(base.NUM_WAYPOINTS) * int(base.STEPS_PER_WAYPOINT)


#: batteries_checker_hard_vla.py: the first ACTIVE_BATTERY_COUNT slots hold batteries, WORKING_BATTERY_COUNT of them
#: work (topk of random scores); oracle_info[:working] = their slots. With one working battery: that slot.
WORKING = Fact(
    "oracle_info",
    "oracle_working",
    lambda base: tuple(range(int(base.ACTIVE_BATTERY_COUNT))),
    lambda base: int(unbatch(base.oracle_info).reshape(-1)[0]),
)


def _from_step_one(_: Any) -> int:
    """No cue phase: what memory holds is produced by the robot's own checks, from step 1 on."""
    return 1


TASKS: dict[str, Task] = {
    **{f"RememberColor{n}-VLA-v0": Task("vla", "object", _color_vla_decision, COLOR, (CUBES,)) for n in (3, 5, 9)},
    **{f"RememberColor{n}-v0": Task("rl", "object", _color_rl_decision, COLOR, (CUBES,)) for n in (3, 5, 9)},
    **{f"ShellGame{k}-v0": Task("rl", "object", _shell_rl_decision, CUP) for k in ("Touch", "Push", "Pick")},
    "ShellGameTouch-VLA-v0": Task("vla", "object", _shell_vla_decision, CUP),
    **{f"Intercept{s}-VLA-v0": Task("vla", "spatial", _intercept_decision, None, (BALL, GOAL), (VELOCITY,)) for s in ("Slow", "Medium", "Fast")},
    "TakeItBack-VLA-v0": Task("vla", "spatial", _take_it_back_decision, START, (), (START_XYZ,)),
    "FindImposterColor3-VLA-v0": Task("vla", "negative", _color_vla_decision, IMPOSTER, (CUBES,)),
    "ChainOfColors3-VLA-v0": Task("vla", "sequential", _chain_decision, CHAIN, (CUBES, BUTTON)),
    "BunchOfColors5-VLA-v0": Task("vla", "capacity", _color_vla_decision, BUNCH, (CUBES, BUTTON)),
    "ShellGameShuffleTouch-VLA-v0": Task("vla", "tracking", _shuffle_decision, FINAL_CUP),
    "BlinkCountButtonPressEasy-VLA-v0": Task("vla", "temporal", _blink_decision, BLINKS, lamp=True),
    "GatherAndRecall3-VLA-v0": Task("vla", "prospective", _gather_decision, FLASH, lamp=True),
    "TraceShapeMedium-VLA-v0": Task("vla", "procedural", _trace_decision, SHAPE, lamp=True),
    "BatteriesCheckerEasy-3-VLA-v0": Task("vla", "checklist", _from_step_one, WORKING, lamp=True),
}
