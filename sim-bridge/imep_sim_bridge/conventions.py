"""The action / observation conventions the adapters declare (PROTOCOL.md, "Conventions"), in vla-eval 0.8.0's
DimSpec vocabulary (vla_eval/specs.py), each read from the simulator's own source:

* LIBERO — robosuite's OSC_POSE controller (LIBERO's OffScreenRenderEnv default, libero/envs/env_wrapper.py
  `controller="OSC_POSE"`; robosuite/controllers/config/osc_pose.json `input_min/max` ±1, `output_min/max`
  ±0.05 m and ±0.5 rad; robosuite/controllers/osc.py turns `delta[3:6]` into a rotation with
  `T.axisangle2quat`): action[0:3] delta xyz, action[3:6] delta axis-angle, each clipped to [−1, 1] and scaled;
  action[6] the gripper, robosuite/models/grippers/panda_gripper.py `PandaGripper.format_action`:
  "-1 => open, 1 => closed" (vla-eval's binary_close_positive). The state is openpi's: eef position, eef
  axis-angle, the two finger joints (vla-eval's STATE_EEF_POS_AA_GRIP, eef_pos3_axisangle3_gripper2).
* MIKASA-Robo (ManiSkill 3.0.0b15, mani_skill/agents/robots/panda/panda.py) — by the env's control mode:
  pd_joint_delta_pos: action[0:7] joint deltas, normalized [−1, 1] ↔ ±0.1 rad (PDJointPosControllerConfig
  `normalize_action=True`, lower/upper ∓0.1, use_delta); pd_joint_pos: absolute joint targets (not normalized);
  pd_ee_delta_pos: action[0:3] delta xyz, [−1, 1] ↔ ±0.1 m; pd_ee_delta_pose: that, then action[3:6] delta
  rotation as XYZ Euler angles (pd_ee_pose.py `euler_angles_to_matrix(delta_rot, "XYZ")`), [−1, 1] ↔ ±0.1 rad.
  The gripper (last entry, every mode): `gripper_pd_joint_pos`, a PDJointPosMimicController with lower −0.01,
  upper 0.04 and normalize_action — an absolute finger target where −1 is closed (−0.01 m) and +1 open
  (0.04 m): vla-eval's binary_close_negative.
* Not declared (conventions None: IMEP checks the action shape only): SimplerEnv (the gripper's sign differs
  between its Google robot and WidowX setups, not read here), the LIBERO chain (one drawer index), replays.
"""

from __future__ import annotations

from .spec import Component, Conventions

IMAGE = Component("image", 0, "rgb_hwc_uint8", field="image", description="agent-view RGB camera")
WRIST_IMAGE = Component("wrist_image", 0, "rgb_hwc_uint8", field="wrist_image", description="wrist RGB camera")
LANGUAGE = Component("language", 0, "language", field="instruction")

#: robosuite OSC_POSE + PandaGripper, as LIBERO runs it.
LIBERO_ACTION: tuple[Component, ...] = (
    Component("position", 3, "delta_xyz", (-1.0, 1.0), description="robosuite OSC_POSE: ×0.05 m"),
    Component("rotation", 3, "axis_angle", (-1.0, 1.0), description="robosuite OSC_POSE: delta axis-angle ×0.5 rad"),
    Component("gripper", 1, "binary_close_positive", (-1.0, 1.0), description="robosuite: −1 open, +1 close"),
)

#: openpi's LIBERO `observation/state` (libero.py openpi_state).
LIBERO_STATE = Component(
    "state",
    8,
    "eef_pos3_axisangle3_gripper2",
    field="state",
    description="eef position, eef axis-angle, the two finger joints",
)


def libero_conventions(*, wrist: bool = True, cameras: bool = True) -> Conventions:
    """The conventions of an env that runs LIBERO's OSC_POSE arm and shows image (+ wrist image), state, instruction
    (without `cameras`: state and instruction only)."""
    images = (IMAGE, *((WRIST_IMAGE,) if wrist else ())) if cameras else ()
    observation = (*images, LIBERO_STATE, LANGUAGE)
    return Conventions(action=LIBERO_ACTION, observation=observation)


MIKASA_GRIPPER = Component(
    "gripper",
    1,
    "binary_close_negative",
    (-1.0, 1.0),
    description="ManiSkill panda: absolute finger target, −1 closed (−0.01 m), +1 open (0.04 m)",
)

#: The arm's components under each ManiSkill control mode the adapter declares.
MIKASA_ARM: dict[str, tuple[Component, ...]] = {
    "pd_joint_delta_pos": (Component("joints", 7, "delta_joint_pos", (-1.0, 1.0), description="ManiSkill: ×0.1 rad"),),
    "pd_joint_pos": (Component("joints", 7, "absolute_joint_pos", description="ManiSkill: joint targets in rad"),),
    "pd_ee_delta_pos": (Component("position", 3, "delta_xyz", (-1.0, 1.0), description="ManiSkill: ×0.1 m"),),
    "pd_ee_delta_pose": (
        Component("position", 3, "delta_xyz", (-1.0, 1.0), description="ManiSkill: ×0.1 m"),
        Component("rotation", 3, "euler_xyz", (-1.0, 1.0), description="ManiSkill: delta XYZ Euler ×0.1 rad"),
    ),
}


def mikasa_conventions(control_mode: str | None, action_dims: int, observation: tuple[Component, ...]) -> Conventions | None:
    """The conventions of a MIKASA env under `control_mode`, or None where the mode (or robot) is not one declared."""
    arm = MIKASA_ARM.get(control_mode or "")
    if arm is None or sum(c.dims for c in arm) + 1 != action_dims:
        return None
    return Conventions(action=(*arm, MIKASA_GRIPPER), observation=observation)
