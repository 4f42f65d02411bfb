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
step; zero when none is known). Phases (one per episode, sticky), the gripper closed throughout:
* `wait` (the first WAIT_STEPS steps, while the ball lands): move toward the goal, high.
* `block` (the ball is moving): stand low where the ball's predicted straight path crosses y = goal_y +
  BLOCK_OFFSET (or earlier, so that it is stopped by LATEST_BLOCK; never closer than the tool can reach in time):
  the ball rolls into the fingertips and stops about at the goal's y.
* `push` (the ball is — believed to be — still): go behind the ball on the line goal → ball (round it, low, without
  touching it), then push it along that line with the fingertip face or edge whose contact normal is that line, at the
  speed that brings it onto the goal centre by the end; let go within RELEASE of the centre (`done`: lift off). A
  ball that rolls away from the goal (it bounced off the fingers) is blocked again on its predicted path.
Measured over InterceptMedium-VLA seeds 650000-650069 in process (tests/real/test_mikasa_vla_policy_real.py runs four):
58/70 with the velocity estimated from memory; 0/70 with it taken as zero (no memory, or reads blocked) — the
tool then heads for where the ball was and the ball rolls on out of the region.
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
TIP_X, TIP_Y = 0.009, 0.015  # half-extent of the closed fingertips in x and y (panda_v3.urdf collision boxes)
AXIS = 0.2  # a push within atan(0.2) ≈ 11° of an axis uses the face, others the edge between two faces
CARRY_LATERAL = 0.015  # the tool has lost the ball when it is this far off the push line
BEHIND = 0.03  # extra distance behind the ball where a push starts
CLEAR = BALL_RADIUS + 0.02  # a low TCP path this far from the ball's centre does not touch it
AROUND = 0.065  # how far beside the push line the TCP goes round the ball
SETTLED = 0.15  # the blocking line is kept once the ball is this close to it (in y)
LOOKAHEAD = 10.0  # at most this many steps ahead the push aims at a ball that still rolls
WAIT_STEPS = 5  # steps before a velocity estimate is trusted
LATEST_BLOCK = 34  # the ball must be stopped by this step to leave time for the push
GAIN = 2.0  # the TCP covers about 0.4 of a commanded delta in one step (measured)
TOOL_SPEED = 0.035  # m per step the TCP covers at full action (measured)
MOVING = 0.004  # m per step: a ball faster than this is moving (0.08 m/s)
PUSH_MIN, PUSH_MAX = 0.005, 0.02  # m per step while pushing
RELEASE = 0.03  # let go of the ball this close to the goal centre
FOLLOW = 1.0 / (0.4 * GAIN)  # target lead that makes the TCP cover `speed` per step


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


def intercept_point(ball: np.ndarray, v: np.ndarray, tcp: np.ndarray) -> np.ndarray:
    """Where the TCP stands, low, on the rolling ball's path, reachable before the ball gets there."""
    heading = v / max(float(np.linalg.norm(v)), 1e-9)
    steps = 2.0
    for _ in range(4):
        point = ball[:2] + v * steps + heading * BLOCK_OFFSET
        steps = min(float(np.linalg.norm(point - tcp[:2])) / TOOL_SPEED + 2.0, LOOKAHEAD)
    point = ball[:2] + v * steps + heading * BLOCK_OFFSET
    return np.array([point[0], point[1], LOW_Z])


def _segment_distance(p: np.ndarray, a: np.ndarray, b: np.ndarray) -> float:
    ab = b - a
    n = float(ab @ ab)
    s = 0.0 if n == 0.0 else float(np.clip((p - a) @ ab / n, 0.0, 1.0))
    return float(np.linalg.norm(p - (a + s * ab)))


def pusher(u: np.ndarray) -> np.ndarray:
    """TCP → the fingertip point that touches the ball when pushing along u (closed gripper, xy): the middle of the
    face for a push close to an axis, else the vertical edge between the two faces — touching the ball there, the
    contact normal is the line from the edge to the ball's centre, i.e. u (a face would push along its own normal)."""
    sx = 1.0 if u[0] >= 0.0 else -1.0
    sy = 1.0 if u[1] >= 0.0 else -1.0
    if abs(float(u[1])) < AXIS * abs(float(u[0])):
        return np.array([sx * TIP_X, 0.0])
    if abs(float(u[0])) < AXIS * abs(float(u[1])):
        return np.array([0.0, sy * TIP_Y])
    return np.array([sx * TIP_X, sy * TIP_Y])


def push_target(ball: np.ndarray, goal: np.ndarray, tcp: np.ndarray, t: int, carrying: bool) -> tuple[np.ndarray, bool, bool]:
    """(TCP target, carrying, released) for pushing a still ball along the line ball → goal.

    The ball rolls on at the speed it was pushed at (no rolling resistance to speak of), so the push speed is the one
    that brings it onto the goal centre at the episode's end — distance / steps left — and the tool lets go (lifts
    off) once the ball is within RELEASE of the centre: it coasts the rest of the way.
    """
    d = goal[:2] - ball[:2]
    dist = float(np.linalg.norm(d))
    if dist < RELEASE:
        return np.array([tcp[0], tcp[1], SAFE_Z]), False, True
    u = d / dist
    c = pusher(u)
    tip = tcp[:2] + c  # the fingertip point that pushes
    start = ball[:2] - u * (BALL_RADIUS + BEHIND) - c
    off = tip - ball[:2]
    lateral = abs(float(np.cross(u, off)))
    along = float(u @ off)
    if carrying and (lateral > CARRY_LATERAL or along > -BALL_RADIUS + 0.015 or along < -(BALL_RADIUS + BEHIND + 0.03)):
        carrying = False
    if not carrying and float(np.linalg.norm(tcp[:2] - start)) < 0.012 and tcp[2] < LOW_Z + 0.015:
        carrying = True
    if carrying:  # advance at the push speed from where the tool is (no run-up: no kick), back onto the line
        speed = float(np.clip(dist / max(EPISODE_STEPS - t, 1), PUSH_MIN, PUSH_MAX))
        xy = tcp[:2] - (off - u * along) + u * speed * FOLLOW
        return np.array([xy[0], xy[1], LOW_Z]), True, False
    return route(tcp, ball, np.array([start[0], start[1], LOW_Z])), False, False


def route(tcp: np.ndarray, ball: np.ndarray, target: np.ndarray) -> np.ndarray:
    """The next TCP target on a low path to `target` that does not sweep the ball along: first straight away from a
    ball it touches, then round it (a waypoint beside the ball, on the tool's side) while the straight path touches it."""
    off = tcp[:2] - ball[:2]
    gap = float(np.linalg.norm(off))
    if gap < CLEAR + 0.005:
        away = ball[:2] + off / max(gap, 1e-9) * (CLEAR + 0.01)
        return np.array([away[0], away[1], LOW_Z])
    if _segment_distance(ball[:2], tcp[:2], target[:2]) < CLEAR:
        d = target[:2] - tcp[:2]
        n = np.array([-d[1], d[0]]) / max(float(np.linalg.norm(d)), 1e-9)
        side = 1.0 if float(n @ off) >= 0.0 else -1.0
        beside = ball[:2] + side * n * AROUND
        return np.array([beside[0], beside[1], LOW_Z])
    return target


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
        if self.phase == "done":  # let the ball coast: keep clear of it
            return Plan("done", np.array([tcp[0], tcp[1], SAFE_Z]))
        if self.phase == "wait":
            return Plan("wait", np.array([goal[0], goal[1], SAFE_Z]))
        if self.phase == "block":
            if self.block_at is None or self.block_at - float(ball[1]) > SETTLED:  # refined while the ball is far
                self.block_at = block_y(ball, v, goal, tcp, t)
            return Plan("block", block_point(ball, v, self.block_at))
        if moving and float(v @ (goal[:2] - ball[:2])) < 0.0:  # it bounced off, away from the goal: stop it again
            self.carrying = False
            return Plan("reblock", route(tcp, ball, intercept_point(ball, v, tcp)))
        lead = min(float(np.linalg.norm(tcp[:2] - ball[:2])) / TOOL_SPEED + 1.0, LOOKAHEAD)
        ahead = ball + np.array([*v, 0.0]) * lead  # about where a still-rolling ball will be when the tool gets there
        target, self.carrying, released = push_target(ball if self.carrying else ahead, goal, tcp, t, self.carrying)
        if released:
            self.phase = "done"
        return Plan("push", target)
