"""Scripted controller for MIKASA-Robo InterceptMedium-VLA (state observations): block the rolling ball, then push it.

The task (mikasa_robo_suite/vla/memory_envs/intercept_vla.py, `InterceptVLABaseEnv`): a ball (radius 0.02) is
launched at y ∈ [-0.9, -0.65] with velocity (U[0, 0.05], U[0.5, 0.75]) m/s (`InterceptMedium`: VELOCITY_RANGE);
the goal region's centre is 0.2 m further in +x, at y ∈ [-0.2, 0.2]. Success (`evaluate`) is the ball's centre within
GOAL_RADIUS = 0.1 of the goal centre in xy; IMEP scores the last of the 60 steps (adapters/mikasa.py,
success_at_end). Measured on this release (SAPIEN 3.0.3, CPU): the ball lands and then rolls at ≈ 0.39 m/s,
almost without rolling resistance (≈ 0.0195 m per 0.05 s control step), so a ball that is merely deflected keeps
rolling out of the region: it has to be stopped, then pushed.

pd_ee_delta_pos (mani_skill/agents/robots/panda/panda.py, `arm_pd_ee_delta_pos`): [dx, dy, dz, gripper],
±1 = ±0.1 m of the tool centre point (TCP) target; gripper -1 = closed. With the gripper closed, the fingertip
boxes (panda_v3.urdf collision shapes) span about ±0.009 m in x and ±0.015 m in y around the TCP.

The controller sees the TCP position, the ball position, the goal centre and a ball velocity estimate (m per
step; zero when none is known). Phases (one per slot, sticky):
* `wait` (no velocity estimate yet, the first WAIT_STEPS steps): move toward the goal, high.
* `block` (the ball is moving): stand, gripper closed and low, where the ball's predicted straight path crosses
  y = goal_y + BLOCK_OFFSET (or earlier, when it would get there too late to be pushed), so that the ball rolls into
  the fingers and stops about at the goal's y.
* `push` (the ball is — believed to be — still): go behind the ball (high when the straight path would hit it),
  then push it along the line ball → goal at a speed that brings it onto the goal centre by the end.
Assuming the ball still (no memory) sends it straight to `push`: it chases a ball that rolls away.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

STEP_M = 0.1  # pd_ee_delta_pos: an action of ±1 moves the TCP target ±0.1 m
GRIPPER_CLOSED = -1.0
EPISODE_STEPS = 60  # InterceptMedium-VLA-v0's max_episode_steps
BALL_RADIUS = 0.02
LOW_Z = 0.02  # TCP height that puts the fingertips across the ball's centre
SAFE_Z = 0.08  # TCP height that clears the ball
BLOCK_OFFSET = BALL_RADIUS + 0.015  # ball centre ↔ TCP in y when the ball rests against the closed fingertips
PUSH_OFFSET = BALL_RADIUS + 0.009  # ball centre ↔ TCP along the push line when in contact
BEHIND = 0.03  # extra distance behind the ball where a push starts
CLEAR = BALL_RADIUS + 0.02  # a low TCP path this far from the ball's centre does not touch it
AROUND = 0.06  # how far beside the push line the TCP goes round the ball
SETTLED = 0.05  # the blocking line is kept once the TCP is this close to it (in y)
LOOKAHEAD = 2.0  # steps ahead the push aims at a ball that still rolls
WAIT_STEPS = 3  # steps before a velocity estimate is trusted
LATEST_BLOCK = 34  # the ball must be stopped by this step to leave time for the push
GAIN = 2.0  # the TCP covers about 0.4 of a commanded delta in one step (measured)
TOOL_SPEED = 0.035  # m per step the TCP covers at full action (measured)
MOVING = 0.004  # m per step: a ball faster than this is moving (0.08 m/s)
PUSH_MIN, PUSH_MAX = 0.005, 0.02  # m per step while pushing
PUSH_SLACK = 6  # finish the push this many steps before the end
SHORT = 0.07  # stop pushing this far short of the goal centre (the ball coasts on)


@dataclass
class Plan:
    """One step's decision: the TCP target and the phase it came from."""

    phase: str
    target: np.ndarray


def velocity(samples: np.ndarray) -> np.ndarray:
    """Least-squares ball velocity (x, y; m per step) from rows (x, y, z, t); zero with fewer than two timesteps."""
    if samples.ndim != 2 or samples.shape[1] != 4 or samples.shape[0] < 2:
        return np.zeros(2)
    t = samples[:, 3].astype(np.float64)
    if float(t.max() - t.min()) <= 0.0:
        return np.zeros(2)
    tc = t - t.mean()
    xy = samples[:, :2].astype(np.float64)
    return (tc @ (xy - xy.mean(axis=0))) / float(tc @ tc)


def action_toward(tcp: np.ndarray, target: np.ndarray) -> np.ndarray:
    """pd_ee_delta_pos action [dx, dy, dz, gripper closed], clipped to ±1 (the TCP covers ≈ 1/GAIN of a delta per step)."""
    delta = np.clip(GAIN * (target - tcp) / STEP_M, -1.0, 1.0)
    return np.array([*delta, GRIPPER_CLOSED], np.float32)


def block_y(ball: np.ndarray, v: np.ndarray, goal: np.ndarray, tcp: np.ndarray, t: int) -> float:
    """The y where the TCP stands so that the ball, rolling on at v, stops against it near the goal's y."""
    vy = max(float(v[1]), 1e-6)
    y = float(goal[1]) + BLOCK_OFFSET
    late = ball[1] + vy * (LATEST_BLOCK - t) + BLOCK_OFFSET  # ball's y at the latest blocking step, plus offset
    y = min(y, float(late))
    # The tool must get there first: not closer to the ball than the ball travels while the tool moves.
    for _ in range(3):
        steps = (y - BLOCK_OFFSET - ball[1]) / vy
        x = ball[0] + v[0] * max(steps, 0.0)
        reach = float(np.linalg.norm(np.array([x, y]) - tcp[:2])) / TOOL_SPEED + 2.0
        if steps < reach:
            y = float(ball[1] + vy * reach + BLOCK_OFFSET)
    return float(y)


def block_point(ball: np.ndarray, v: np.ndarray, y: float) -> np.ndarray:
    """The TCP target on the line y = `y` where the ball's predicted straight path crosses it."""
    steps = (y - BLOCK_OFFSET - ball[1]) / max(float(v[1]), 1e-6)
    return np.array([float(ball[0] + v[0] * max(steps, 0.0)), y, LOW_Z])


def _segment_distance(p: np.ndarray, a: np.ndarray, b: np.ndarray) -> float:
    ab = b - a
    n = float(ab @ ab)
    s = 0.0 if n == 0.0 else float(np.clip((p - a) @ ab / n, 0.0, 1.0))
    return float(np.linalg.norm(p - (a + s * ab)))


def push_target(ball: np.ndarray, goal: np.ndarray, tcp: np.ndarray, t: int, carrying: bool) -> tuple[np.ndarray, bool]:
    """(TCP target, carrying) for pushing a still ball along the line ball → goal."""
    d = goal[:2] - ball[:2]
    aim = float(np.linalg.norm(d))
    if aim > SHORT:  # the ball coasts on after the tool stops: aim short of the centre
        d = d * (aim - SHORT) / aim
    dist = float(np.linalg.norm(d))
    if dist < 0.01:
        return np.array([tcp[0], tcp[1], SAFE_Z]), False  # there: lift off and leave it
    u = d / dist
    contact = ball[:2] - u * PUSH_OFFSET
    start = ball[:2] - u * (PUSH_OFFSET + BEHIND)
    lateral = abs(float(np.cross(u, tcp[:2] - ball[:2])))
    along = float(u @ (tcp[:2] - ball[:2]))
    if carrying and (lateral > 0.015 or along > -PUSH_OFFSET + 0.02 or along < -(PUSH_OFFSET + BEHIND + 0.03)):
        carrying = False
    if not carrying and float(np.linalg.norm(tcp[:2] - start)) < 0.012 and tcp[2] < LOW_Z + 0.015:
        carrying = True
    if carrying:
        left = max(EPISODE_STEPS - PUSH_SLACK - t, 1)
        speed = float(np.clip(dist / left, PUSH_MIN, PUSH_MAX))
        xy = contact + u * speed
        return np.array([xy[0], xy[1], LOW_Z]), True
    # go to `start`, low; round the ball (a waypoint beside `start`, on the tool's side) when the straight path touches it
    if _segment_distance(ball[:2], tcp[:2], start) < CLEAR:
        side = 1.0 if float(np.cross(u, tcp[:2] - ball[:2])) >= 0.0 else -1.0
        beside = start + side * np.array([-u[1], u[0]]) * AROUND
        return np.array([beside[0], beside[1], LOW_Z]), False
    return np.array([start[0], start[1], LOW_Z]), False


class InterceptController:
    """Per-episode state (phase, carrying) and the step rule; `plan` is pure given that state."""

    def __init__(self) -> None:
        self.phase = "wait"
        self.carrying = False
        self.block_at: float | None = None  # the blocking line's y, chosen once

    def plan(self, t: int, tcp: np.ndarray, ball: np.ndarray, goal: np.ndarray, v: np.ndarray) -> Plan:
        moving = float(np.linalg.norm(v)) > MOVING
        if self.phase == "wait" and t >= WAIT_STEPS:
            self.phase = "block" if moving else "push"
        if self.phase == "block" and float(v[1]) < MOVING:  # stopped, or rolling back off the fingers
            self.phase = "push"
        if self.phase == "wait":
            return Plan("wait", np.array([goal[0], goal[1], SAFE_Z]))
        if self.phase == "block":
            if self.block_at is None or abs(float(tcp[1]) - self.block_at) > SETTLED:  # refined until the tool is there
                self.block_at = block_y(ball, v, goal, tcp, t)
            return Plan("block", block_point(ball, v, self.block_at))
        ahead = ball + np.array([*v, 0.0]) * LOOKAHEAD  # where a still-rolling ball will be when the tool gets there
        target, self.carrying = push_target(ball if self.carrying else ahead, goal, tcp, t, self.carrying)
        return Plan("push", target)
