"""Unconstrained body equations A q_ddot = B (seed 000, eqs. 35-39; seed 001, eqs. 12-16).

Body i with coordinates q_i = (r_i, theta_i), theta Cardan (3) or quaternion (4):

Cardan (eq. 35):     [m E, 0; 0, J D] q_ddot = [F; -(J D_dot + (D theta_dot)~ J D) theta_dot + M^(i)]
quaternion (eq. 12): [m E, 0; 0, 2 J R*; 0, Lambda^T] q_ddot
                     = [F; -4 R* R*_dot^T J R* Lambda_dot + M^(i); -Lambda_dot^T Lambda_dot]

F (frame 0) is the resultant of gravity and the joint force elements (eq. 24) and M^(i) the
resultant moment about the centre of mass in body axes (eq. 25).
"""

from __future__ import annotations

import numpy as np

from dynid.multibody.bodies import BodyModel
from dynid.multibody.quaternion import r_star


def _diag(moments):
    return moments[..., :, None] * np.eye(3)


def body_equations(model: BodyModel, form, q, qd, force, moment):
    """Per-body A_i (N, n, r, d) and B_i (N, n, r) (r = d = 6 Cardan, 7 quaternion).

    q, qd: (N, n, d) coordinates and rates; force: (N, n, 3) resultant force incl. gravity
    [N]; moment: (N, n, 3) resultant moment about the centre of mass, frame 0 [N m].
    """
    N, n = q.shape[:2]
    d = 3 + form.size
    theta, dtheta = q[..., 3:], qd[..., 3:]
    rotation = form.rotation(theta)
    m_body = np.einsum("...ji,...j->...i", rotation, moment)  # M^(i)
    J = _diag(model.moments)[None]
    A = np.zeros((N, n, d, d))
    B = np.zeros((N, n, d))
    A[..., :3, :3] = model.mass[None, :, None, None] * np.eye(3)
    B[..., :3] = force  # eq. 28: A^(0i) F^(i) = F
    if form.size == 3:
        D = form.angular_map(theta)
        w_body = np.einsum("...ij,...j->...i", D, dtheta)
        A[..., 3:, 3:] = J @ D  # eq. 37
        gyro = np.einsum("...ij,...j->...i", J, form.map_rate_times_rate(theta, dtheta)) \
            + np.cross(w_body, np.einsum("...ij,...j->...i", J, w_body))
        B[..., 3:] = -gyro + m_body  # eq. 37
    else:
        R, Rd = r_star(theta), r_star(dtheta)
        A[..., 3:6, 3:] = 2.0 * J @ R  # seed 001, eq. 14
        A[..., 6, 3:] = theta
        gyro = 4.0 * np.einsum("...ij,...j->...i", R @ np.swapaxes(Rd, -1, -2) @ J @ R, dtheta)
        B[..., 3:6] = -gyro + m_body
        B[..., 6] = -np.sum(dtheta * dtheta, -1)  # seed 001, eq. 11
    return A, B


def block_diagonal(blocks: np.ndarray) -> np.ndarray:
    """A = diag(A_1 .. A_n) (eq. 39): (N, n, r, d) -> (N, n r, n d)."""
    N, n, r, d = blocks.shape
    out = np.zeros((N, n * r, n * d))
    for b in range(n):
        out[:, b * r:(b + 1) * r, b * d:(b + 1) * d] = blocks[:, b]
    return out
