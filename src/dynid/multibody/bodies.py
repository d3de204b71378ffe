"""The robot as a set of free rigid bodies B_1..B_n (seed 000, section 2.1).

Body i is link i of the robot. Its body-fixed base e^(i) is the principal-axis frame at the
centre of mass (the link axes when the central inertia is already diagonal in them, as for
the seed's cylinders), so J^(i) = diag(J11, J22, J33) (seed 000, eq. 21). Joint k connects
its inside body (the parent link, or the ground B_0) to its outside body B_k at the joint
point O_k, the origin of the joint frame (a point of the joint axis).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from dynid.robot.inertia import to_mass_com_inertia

# an off-diagonal central inertia below this fraction of the largest moment counts as diagonal
DIAGONAL_TOL = 1e-12


def principal_axes(inertia_about_com: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(J (3,), P (3, 3)) with I_c = P diag(J) P^T, det P = +1; P = E when I_c is diagonal."""
    ic = np.asarray(inertia_about_com, dtype=float)
    scale = max(float(np.max(np.abs(np.diag(ic)))), 1e-300)
    if np.max(np.abs(ic - np.diag(np.diag(ic)))) <= DIAGONAL_TOL * scale:
        return np.diag(ic).copy(), np.eye(3)
    moments, vectors = np.linalg.eigh(ic)
    if np.linalg.det(vectors) < 0:
        vectors[:, 2] *= -1.0
    return moments, vectors


@dataclass(frozen=True, eq=False)
class BodyModel:
    """Constant description of the bodies and joints, all (n, ...) arrays.

    mass (n,) [kg]; moments (n, 3) principal central moments J11, J22, J33 [kg m^2];
    principal (n, 3, 3) body axes e^(i) in link-frame coordinates; com (n, 3) centre of mass in
    link coordinates [m]; inside (n,) inside body of joint k (-1 = ground);
    joint_in_link (n, 3) O_k in link-k coordinates; s_out (n, 3) vector O_ck -> O_k in e^(k);
    s_in (n, 3) vector O_ci -> O_k (at q_k = 0) in e^(i), or O_k in frame 0 for the ground;
    axis_out (n, 3) joint axis p_k in e^(k); axis_in (n, 3) p_k in e^(i) (frame 0 for ground);
    prismatic (n,) bool.
    """

    robot: object
    mass: np.ndarray
    moments: np.ndarray
    principal: np.ndarray
    com: np.ndarray
    inside: np.ndarray
    joint_in_link: np.ndarray
    s_out: np.ndarray
    s_in: np.ndarray
    axis_out: np.ndarray
    axis_in: np.ndarray
    prismatic: np.ndarray

    @property
    def n(self) -> int:
        return len(self.mass)

    @cached_property
    def perpendicular_in(self) -> np.ndarray:
        """(n, 2, 3) unit u1, u2 perpendicular to each joint axis, in e^(i) of the inside body."""
        u1, u2 = perpendicular_pair(self.axis_in)
        return np.stack([u1, u2], 1)

    @cached_property
    def slide_image(self) -> np.ndarray:
        """(n, 3): u1 of perpendicular_in expressed in e^(k) of the outside body at q_k = 0
        (used by the no-rotation constraint of prismatic joints; zero for revolute joints)."""
        out = np.zeros((self.n, 3))
        for k in np.flatnonzero(self.prismatic):
            joint = self.robot.joints[k]
            i = int(self.inside[k])
            rel = joint.placement_rotation @ joint.offset_rotation  # link-k axes in inside-link axes
            inside_principal = self.principal[i] if i >= 0 else np.eye(3)
            out[k] = self.principal[k].T @ rel.T @ inside_principal @ self.perpendicular_in[k, 0]
        return out

    @property
    def names(self) -> list[str]:
        return [link.name for link in self.robot.links]


def body_model(robot) -> BodyModel:
    n = robot.n
    mass, moments = np.zeros(n), np.zeros((n, 3))
    principal, com = np.zeros((n, 3, 3)), np.zeros((n, 3))
    for i, link in enumerate(robot.links):
        m, c, ic = to_mass_com_inertia(link.inertial)
        mass[i], com[i] = m, c
        moments[i], principal[i] = principal_axes(ic) if m > 0 else (np.zeros(3), np.eye(3))
    joint_in_link, s_out, s_in = np.zeros((n, 3)), np.zeros((n, 3)), np.zeros((n, 3))
    axis_out, axis_in = np.zeros((n, 3)), np.zeros((n, 3))
    for k, joint in enumerate(robot.joints):
        re, te = joint.offset_rotation, joint.offset_translation
        joint_in_link[k] = -re.T @ te
        s_out[k] = principal[k].T @ (joint_in_link[k] - com[k])
        axis_out[k] = principal[k].T @ (re.T @ joint.axis)
        rp, tp = joint.placement_rotation, joint.placement_translation
        p = joint.parent
        if p < 0:
            s_in[k], axis_in[k] = tp, rp @ joint.axis
        else:
            s_in[k] = principal[p].T @ (tp - com[p])
            axis_in[k] = principal[p].T @ (rp @ joint.axis)
    return BodyModel(robot, mass, moments, principal, com, robot.parents.copy(), joint_in_link,
                     s_out, s_in, axis_out, axis_in,
                     np.array([j.type == "prismatic" for j in robot.joints]))


def perpendicular_pair(axis: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Unit u1, u2 (..., 3) with (u1, u2, axis) right-handed and orthonormal."""
    axis = np.asarray(axis, dtype=float)
    helper = np.where(np.abs(axis[..., :1]) < 0.9, np.array([1.0, 0.0, 0.0]), np.array([0.0, 1.0, 0.0]))
    u1 = np.cross(helper, axis)
    u1 /= np.linalg.norm(u1, axis=-1, keepdims=True)
    return u1, np.cross(axis, u1)
