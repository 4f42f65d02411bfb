"""Scripted drawer-opening controller of the chain executor `LIBERO-ChainDrawers-scripted` (registered by SHA-256).

The motor source of `adapters/libero_chain_scripted.py`: it opens any drawer of LIBERO's wooden cabinet
(KITCHEN_SCENE1: top, middle and bottom drawer, fronts facing +y, toward the robot) from the robot's own
proprioception (openpi's `state`: eef position, eef axis-angle, gripper qpos) and the world position of
the chosen drawer's handle bar, read once at the start of the execution. This file is self-contained
(numpy only), so its SHA-256 pins the whole controller.

A hook, not a grasp. The handle bars are 9 cm long along x, 7 cm apart vertically and 2.5 cm in front
of the drawer fronts. A top-down grasp reaches only the top handle (the gripper stops on the handles
above any lower one), and a horizontal grasp needs the Panda hand's 20 cm span vertical, which the table
(4.6 cm below the bottom handle) does not leave room for. So the gripper is turned 90° about the
vertical (fingers along the bar, the hand's span along x), pitched 45° toward the cabinet about x, and
closed; the closed fingertips come in along that slant, between the handle above and the bar, to the
gap behind the bar's back edge, press down there and pull the drawer toward the robot (+y). The same
plan opens every drawer (measured: top and bottom from all 50 init states of their tasks, the middle one
from the 10 init states 0, 5, … 45 of the top drawer's task, judged by LIBERO's `is_open`). Actions are LIBERO's OSC_POSE deltas scaled to [−1, 1] (1 ↔ 5 cm, 0.5 rad per
step); each phase lasts a fixed number of steps; the run stops at LIBERO's first `done`.
Tuned and measured on the real simulator (robosuite 1.4.0, MuJoCo 2.3.7; see the adapter's docstring).
"""

from __future__ import annotations

from typing import Any, Callable, Mapping

import numpy as np

POS_SCALE = 0.05  # OSC_POSE output_max for position (m per unit action)
ROT_SCALE = 0.5  # OSC_POSE output_max for rotation (rad per unit action)
YAW = np.pi / 2  # about the vertical, from the pose at the start: fingers along the handle bar
PITCH = np.pi / 4  # then about x: the fingertips point 45° down, toward the cabinet (−y)
CLOSED = 1.0  # gripper action: closed throughout
#: (fingertip target as an offset from the handle bar's centre in metres, steps) per phase.
PLAN: tuple[tuple[tuple[float, float, float], int], ...] = (
    ((0.0, 0.085, 0.133), 40),  # in front of and above the bar, while turning and closing
    ((0.0, 0.021, 0.039), 25),  # on the 45° line into the gap behind the bar
    ((0.0, -0.014, 0.004), 25),  # fingertips behind the bar's back edge
    ((0.0, -0.014, -0.006), 10),  # press down there
    ((0.0, 0.25, -0.01), 60),  # pull toward the robot
)
STEPS = sum(n for _, n in PLAN)


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


def target_rotation(start_axisangle: np.ndarray) -> np.ndarray:
    """The hook pose: the start orientation turned YAW about z, then PITCH about x (world frame)."""
    cy, sy = np.cos(YAW), np.sin(YAW)
    cp, sp = np.cos(PITCH), np.sin(PITCH)
    yaw = np.array([[cy, -sy, 0.0], [sy, cy, 0.0], [0.0, 0.0, 1.0]])
    pitch = np.array([[1.0, 0.0, 0.0], [0.0, cp, sp], [0.0, -sp, cp]])  # −PITCH about x: the tool axis −z tilts to −y
    return pitch @ yaw @ axisangle_to_matrix(start_axisangle)


def action(state: np.ndarray, target: np.ndarray, target_rot: np.ndarray) -> np.ndarray:
    """One OSC_POSE action toward the fingertip `target` and orientation `target_rot`, gripper closed."""
    a = np.zeros(7, np.float64)
    a[:3] = np.clip((target - state[:3]) / POS_SCALE, -1.0, 1.0)
    err = matrix_to_axisangle(target_rot @ axisangle_to_matrix(state[3:6]).T)
    a[3:6] = np.clip(err / ROT_SCALE, -1.0, 1.0)
    a[6] = CLOSED
    return a


def open_drawer(env: Any, obs: Mapping[str, Any], handle: np.ndarray, state_of: Callable[[Mapping[str, Any]], np.ndarray]) -> tuple[int, int]:
    """Drive PLAN from `obs` toward the handle bar at `handle`; (steps taken, 1-based step of the first done or −1)."""
    target_rot = target_rotation(state_of(obs).astype(np.float64)[3:6])
    handle = np.asarray(handle, np.float64)
    steps = 0
    for offset, n in PLAN:
        for _ in range(n):
            a = action(state_of(obs).astype(np.float64), handle + np.asarray(offset), target_rot)
            obs, _reward, done, _info = env.step(a.tolist())
            steps += 1
            if done:
                return steps, steps
    return steps, -1
