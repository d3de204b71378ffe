"""URDF text of a Robot: one URDF link per actuated joint, inertials from the standard parameters.

URDF places a link's frame at its joint (the frame the joint rotates). dynid's link frame i
is that joint frame followed by the fixed offset E_i (identity for URDF and modified DH
robots, ``TransZ(d) TransX(a) RotX(alpha)`` for standard DH), so

- link i's inertial is expressed in the joint frame: theta moved through E_i;
- joint i's <origin> is E_parent P_i (dynid's placement P_i is given in the parent's link frame).

Numbers are written with 17 significant digits (``repr``), so a reader recovers the same
doubles. The inertial <origin> carries the center of mass with rpy 0 and the full central
inertia tensor (no diagonalization). A ``<mujoco><compiler>`` element tells MuJoCo to take
the inertials as written (no inertia from geometry, no balancing, no fusion of static bodies);
other URDF readers ignore it. Joint friction, when given, is ``<dynamics damping friction>``
(viscous and Coulomb coefficients: the URDF spec's meaning, read by MuJoCo as damping and
frictionloss and by Pinocchio as damping and friction).
"""

from __future__ import annotations

import math
from pathlib import Path
from xml.sax.saxutils import quoteattr

import numpy as np

from dynid.data.io import atomic_write_text
from dynid.robot.inertia import to_mass_com_inertia
from dynid.robot.inertia import move_inertial

BASE_LINK = "base_link"


def _num(x: float) -> str:
    return repr(float(x)) if float(x) != 0.0 else "0"


def _vec(v) -> str:
    return " ".join(_num(x) for x in v)


def rpy_from_matrix(r: np.ndarray) -> np.ndarray:
    """URDF roll-pitch-yaw (R = Rz(yaw) Ry(pitch) Rx(roll)) of a rotation matrix [rad]."""
    pitch = math.atan2(-r[2, 0], math.hypot(r[0, 0], r[1, 0]))
    if math.hypot(r[0, 0], r[1, 0]) < 1e-12:  # gimbal lock: put everything in roll
        return np.array([math.atan2(-r[1, 2], r[1, 1]), pitch, 0.0])
    return np.array([math.atan2(r[2, 1], r[2, 2]), pitch, math.atan2(r[1, 0], r[0, 0])])


def _origin(rotation: np.ndarray, translation: np.ndarray) -> str:
    return f'<origin xyz="{_vec(translation)}" rpy="{_vec(rpy_from_matrix(rotation))}"/>'


def _unique_names(robot) -> list[str]:
    names, seen = [], {BASE_LINK}
    for i, link in enumerate(robot.links):
        name = link.name or f"link{i + 1}"
        while name in seen:
            name = f"{name}_{i + 1}"
        seen.add(name)
        names.append(name)
    return names


def _inertial(theta_joint_frame: np.ndarray) -> list[str]:
    mass, com, ic = to_mass_com_inertia(theta_joint_frame)
    six = (ic[0, 0], ic[0, 1], ic[0, 2], ic[1, 1], ic[1, 2], ic[2, 2])
    attrs = " ".join(f'{k}="{_num(v)}"' for k, v in zip(("ixx", "ixy", "ixz", "iyy", "iyz", "izz"), six))
    return ["    <inertial>", f'      <origin xyz="{_vec(com)}" rpy="0 0 0"/>',
            f'      <mass value="{_num(mass)}"/>', f"      <inertia {attrs}/>", "    </inertial>"]


def _limit(joint) -> str:
    lim = joint.limits
    attrs = []
    if math.isfinite(lim.q_min) and math.isfinite(lim.q_max):
        attrs += [f'lower="{_num(lim.q_min)}"', f'upper="{_num(lim.q_max)}"']
    attrs.append(f'effort="{_num(lim.tau_max) if math.isfinite(lim.tau_max) else "0"}"')
    attrs.append(f'velocity="{_num(lim.dq_max) if math.isfinite(lim.dq_max) else "0"}"')
    return f"<limit {' '.join(attrs)}/>"


def urdf_text(robot, name: str | None = None, comment: str = "", dynamics=None) -> str:
    """URDF of ``robot`` (its current standard parameters). Revolute joints without finite
    position limits become ``continuous``; a missing effort or velocity limit is written as 0
    (URDF's "unspecified"). ``dynamics``: (damping, friction), each (n,) per actuated joint
    (viscous [N m s/rad | N s/m] and Coulomb [N m | N] coefficients), written as
    ``<dynamics damping friction>`` (MuJoCo reads them as damping and frictionloss, Pinocchio
    as its damping and friction)."""
    joint_dynamics = {} if dynamics is None else {
        joint.name: (float(dynamics[0][k]), float(dynamics[1][k])) for k, joint in enumerate(robot.actuated_joints)}
    names = _unique_names(robot)
    lines = ['<?xml version="1.0"?>']
    if comment:
        lines.append("<!-- " + comment.replace("--", "- -") + " -->")
    lines += [f"<robot name={quoteattr(name or robot.name)}>",
              '  <mujoco><compiler angle="radian" inertiafromgeom="false" balanceinertia="false" '
              'fusestatic="false" discardvisual="true"/></mujoco>',
              f'  <link name="{BASE_LINK}"/>']
    for i, joint in enumerate(robot.joints):
        theta_link = robot.links[i].inertial
        theta_joint = move_inertial(np.asarray(theta_link), joint.offset_rotation, joint.offset_translation)
        lines += [f"  <link name={quoteattr(names[i])}>", *_inertial(theta_joint), "  </link>"]
    for i, joint in enumerate(robot.joints):
        rot, trans = joint.placement_rotation, joint.placement_translation
        if joint.parent >= 0:  # placement is given in the parent's link frame: prepend E_parent
            parent = robot.joints[joint.parent]
            rot, trans = parent.offset_rotation @ rot, parent.offset_translation + parent.offset_rotation @ trans
        bounded = math.isfinite(joint.limits.q_min) and math.isfinite(joint.limits.q_max)
        kind = joint.type if joint.type == "prismatic" or bounded else "continuous"
        parent_link = BASE_LINK if joint.parent < 0 else names[joint.parent]
        lines += [f"  <joint name={quoteattr(joint.name)} type=\"{kind}\">",
                  f"    <parent link={quoteattr(parent_link)}/>", f"    <child link={quoteattr(names[i])}/>",
                  f"    {_origin(rot, trans)}", f'    <axis xyz="{_vec(joint.axis)}"/>',
                  f"    {_limit(joint)}", *_dynamics(joint_dynamics.get(joint.name)), *_mimic(joint), "  </joint>"]
    for joint in robot.actuated_joints:
        if joint.drive.gear_ratio != 1.0:
            lines += [f"  <transmission name={quoteattr(joint.name + '_transmission')}>",
                      "    <type>transmission_interface/SimpleTransmission</type>",
                      f"    <joint name={quoteattr(joint.name)}/>",
                      f"    <actuator name={quoteattr(joint.name + '_motor')}>"
                      f"<mechanicalReduction>{_num(joint.drive.gear_ratio)}</mechanicalReduction></actuator>",
                      "  </transmission>"]
    lines += _couplings(robot)
    lines.append("</robot>")
    return "\n".join(lines) + "\n"


def _dynamics(values) -> list[str]:
    if values is None:
        return []
    return [f'    <dynamics damping="{_num(values[0])}" friction="{_num(values[1])}"/>']


def _mimic(joint) -> list[str]:
    if joint.mimic is None:
        return []
    m = joint.mimic
    return [f"    <mimic joint={quoteattr(m.leader)} multiplier=\"{_num(m.multiplier)}\" offset=\"{_num(m.offset)}\"/>"]


def _couplings(robot) -> list[str]:
    """The off-diagonal entries of a coupled transmission as dynid extension elements (docs/formats.md)."""
    if not robot.is_coupled:
        return []
    t, names = robot.transmission_matrix, robot.joint_names
    return [f"  <dynid_coupling motor={quoteattr(names[k])} joint={quoteattr(names[j])} ratio=\"{_num(t[k, j])}\"/>"
            for k, j in zip(*np.nonzero(t)) if k != j]


def write_urdf(path: str | Path, robot, name: str | None = None, comment: str = "", dynamics=None) -> None:
    """Write ``urdf_text(robot)`` to ``path`` atomically."""
    atomic_write_text(path, urdf_text(robot, name, comment, dynamics))
