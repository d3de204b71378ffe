"""Batched forward kinematics and link motion over N samples (no per-sample Python loop)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dynid.dynamics.arrays import joint_arrays
from dynid.dynamics.spatial import cross, rotate, rotate_t
from dynid.robot.transforms import axis_angle


def joint_transforms(robot, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Parent-to-link transforms T_{p,i}(q) = P_i M_i(q_i) E_i.

    q: (N, n) joint positions [rad or m].
    Returns rotation (N, n, 3, 3) (link axes in parent coordinates) and translation (N, n, 3)
    (link origin in parent coordinates) [m].
    """
    (q,), _ = joint_arrays(robot, q=q)
    if robot.has_mimic:  # one transform per moving body, at the tree coordinates of q
        return joint_transforms(robot.tree, robot.tree_coordinates(q)[0])
    rotation = np.empty(q.shape + (3, 3))
    translation = np.empty(q.shape + (3,))
    for i, joint in enumerate(robot.joints):
        rp, tp = joint.placement_rotation, joint.placement_translation
        re, te = joint.offset_rotation, joint.offset_translation
        if joint.type == "revolute":
            rm = axis_angle(joint.axis, q[:, i])
            rotation[:, i] = rp @ rm @ re
            translation[:, i] = tp + rotate(rp @ rm, te)
        else:
            rotation[:, i] = rp @ re
            translation[:, i] = tp + (q[:, i, None] * joint.axis + te) @ rp.T
    return rotation, translation


def forward_kinematics(robot, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """World poses of all link frames.

    q: (N, n). Returns rotation (N, n, 3, 3) (link axes in world coordinates) and origin
    (N, n, 3) [m] in the world (base) frame; a single sample (n,) gives (n, 3, 3), (n, 3).
    A robot with mimic joints gives one frame per moving body (n_bodies).
    """
    (q,), single = joint_arrays(robot, q=q)
    if robot.has_mimic:
        rotation, origin = forward_kinematics(robot.tree, robot.tree_coordinates(q)[0])
        return (rotation[0], origin[0]) if single else (rotation, origin)
    rel_r, rel_t = joint_transforms(robot, q)
    rotation = np.empty_like(rel_r)
    origin = np.empty_like(rel_t)
    for i, p in enumerate(robot.parents):
        if p < 0:
            rotation[:, i], origin[:, i] = rel_r[:, i], rel_t[:, i]
        else:
            rotation[:, i] = rotation[:, p] @ rel_r[:, i]
            origin[:, i] = origin[:, p] + rotate(rotation[:, p], rel_t[:, i])
    return (rotation[0], origin[0]) if single else (rotation, origin)


@dataclass(frozen=True)
class LinkMotion:
    """Spatial motion of every link in its own frame, (N, n, 3) each.

    w, v: angular velocity and linear velocity of the link-frame origin.
    dw, dv: spatial acceleration (dv is the *spatial* linear part; the classical acceleration
    of the origin is dv + w x v). The base accelerates by -gravity when gravity is included.
    rotation, translation: the parent-to-link transforms they were computed with.
    """

    w: np.ndarray
    v: np.ndarray
    dw: np.ndarray
    dv: np.ndarray
    rotation: np.ndarray
    translation: np.ndarray

    @property
    def classical_acceleration(self) -> np.ndarray:
        """Linear acceleration of each link origin (gravity included as base motion)."""
        return self.dv + cross(self.w, self.v)


def link_motion(robot, q, dq, ddq, gravity=None) -> LinkMotion:
    """Velocities and accelerations of all links by the forward recursion of RNEA.

    V_i = X_{i<-p} V_p + S_i dq_i;  A_i = X_{i<-p} A_p + S_i ddq_i + V_i x S_i dq_i
    (Featherstone 2008, Table 5.1). ``gravity`` (3,) overrides the robot's gravity.
    """
    (q, dq, ddq), _ = joint_arrays(robot, q=q, dq=dq, ddq=ddq)
    if robot.has_mimic:  # motion of every moving body (n_bodies)
        return link_motion(robot.tree, *robot.tree_coordinates(q, dq, ddq), gravity=gravity)
    g = robot.gravity if gravity is None else np.asarray(gravity, dtype=float)
    rel_r, rel_t = joint_transforms(robot, q)
    shape = q.shape + (3,)
    w, v, dw, dv = (np.empty(shape) for _ in range(4))
    for i, p in enumerate(robot.parents):
        s_w, s_v = robot.screw_axes[i, :3], robot.screw_axes[i, 3:]
        r, t = rel_r[:, i], rel_t[:, i]
        if p < 0:
            wp = np.zeros_like(t)
            vp = wp
            dwp = wp
            dvp = np.broadcast_to(-g, t.shape)
        else:
            wp, vp, dwp, dvp = w[:, p], v[:, p], dw[:, p], dv[:, p]
        wi = rotate_t(r, wp) + s_w * dq[:, i, None]
        vi = rotate_t(r, vp - cross(t, wp)) + s_v * dq[:, i, None]
        sw_dq, sv_dq = s_w * dq[:, i, None], s_v * dq[:, i, None]
        dw[:, i] = rotate_t(r, dwp) + s_w * ddq[:, i, None] + cross(wi, sw_dq)
        dv[:, i] = (
            rotate_t(r, dvp - cross(t, dwp))
            + s_v * ddq[:, i, None]
            + cross(wi, sv_dq)
            + cross(vi, sw_dq)
        )
        w[:, i], v[:, i] = wi, vi
    return LinkMotion(w, v, dw, dv, rel_r, rel_t)
