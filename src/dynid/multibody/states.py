"""Joint-space trajectories turned into absolute body coordinates (seed 000, eqs. 1-7).

Uses the foundation's batched kinematics: link poses, velocities and accelerations of every
link, then moved to the centre of mass and to the principal axes of each body.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dynid.dynamics import forward_kinematics, link_motion, link_wrenches
from dynid.dynamics.spatial import rotate
from dynid.multibody.bodies import BodyModel


@dataclass(frozen=True)
class BodyStates:
    """World-frame motion of every body, (N, n, ...) arrays.

    r, v, a: centre-of-mass position [m], velocity, acceleration (gravity not included);
    rotation: A^(0i) (N, n, 3, 3); w, dw: angular velocity and acceleration in frame 0;
    joint_point: O_k (N, n, 3).
    """

    r: np.ndarray
    v: np.ndarray
    a: np.ndarray
    rotation: np.ndarray
    w: np.ndarray
    dw: np.ndarray
    joint_point: np.ndarray

    @property
    def w_body(self) -> np.ndarray:
        return np.einsum("...ji,...j->...i", self.rotation, self.w)

    @property
    def dw_body(self) -> np.ndarray:
        return np.einsum("...ji,...j->...i", self.rotation, self.dw)


def body_states(model: BodyModel, q, dq, ddq) -> BodyStates:
    """q, dq, ddq: (N, n) joint trajectory -> BodyStates in frame 0."""
    robot = model.robot
    rot, origin = forward_kinematics(robot, q)
    motion = link_motion(robot, q, dq, ddq, gravity=np.zeros(3))
    c = model.com
    w, dw = motion.w, motion.dw
    v_c = motion.v + np.cross(w, c)
    a_c = motion.classical_acceleration + np.cross(dw, c) + np.cross(w, np.cross(w, c))
    return BodyStates(
        r=origin + rotate(rot, c),
        v=rotate(rot, v_c),
        a=rotate(rot, a_c),
        rotation=rot @ model.principal,
        w=rotate(rot, w),
        dw=rotate(rot, dw),
        joint_point=origin + rotate(rot, model.joint_in_link),
    )


def joint_reactions(model: BodyModel, q, dq, ddq) -> tuple[np.ndarray, np.ndarray]:
    """Force and moment about O_k exerted by the inside body on the outside body of each joint,
    in frame 0, by the foundation's recursive Newton-Euler: (N, n, 3) [N], (N, n, 3) [N m].

    link_wrenches computes the physical joint wrench (gravity enters as a base acceleration,
    which gives the same interaction wrench as gravity acting on every body).
    """
    robot = model.robot
    rot, _ = forward_kinematics(robot, q)
    moment, force = link_wrenches(robot, link_motion(robot, q, dq, ddq))
    moment_o = moment - np.cross(model.joint_in_link, force)
    return rotate(rot, force), rotate(rot, moment_o)


def joint_positions(model: BodyModel, rotation: np.ndarray, r: np.ndarray) -> np.ndarray:
    """Recover joint coordinates (N, n) from body poses (A^(0i) (N, n, 3, 3), r (N, n, 3)).

    Revolute: angle of the relative rotation about the joint axis (unwrapped over time);
    prismatic: displacement of O_k along the axis.
    """
    robot = model.robot
    n_samples = rotation.shape[0]
    link_rot = rotation @ np.swapaxes(model.principal, -1, -2)
    link_org = r - np.einsum("...ij,...j->...i", link_rot, model.com)
    q = np.zeros((n_samples, robot.n))
    for k, joint in enumerate(robot.joints):
        p = joint.parent
        rp, tp = joint.placement_rotation, joint.placement_translation
        if p < 0:
            parent_rot = np.broadcast_to(np.eye(3), (n_samples, 3, 3))
            parent_org = np.zeros((n_samples, 3))
        else:
            parent_rot, parent_org = link_rot[:, p], link_org[:, p]
        if joint.type == "prismatic":
            o_k = link_org[:, k] + rotate(link_rot[:, k], model.joint_in_link[k])
            local = np.einsum("nji,nj->ni", parent_rot, o_k - parent_org) - tp
            q[:, k] = local @ (rp @ joint.axis)
        else:
            m = rp.T @ np.swapaxes(parent_rot, -1, -2) @ link_rot[:, k] @ joint.offset_rotation.T
            vee = np.stack([m[:, 2, 1] - m[:, 1, 2], m[:, 0, 2] - m[:, 2, 0], m[:, 1, 0] - m[:, 0, 1]], -1)
            s = 0.5 * vee @ joint.axis
            c = 0.5 * (np.trace(m, axis1=1, axis2=2) - 1.0)
            q[:, k] = np.unwrap(np.arctan2(s, c))
    return q
