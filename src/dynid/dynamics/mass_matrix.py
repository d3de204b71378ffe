"""Joint-space mass matrix by the composite-rigid-body algorithm (Featherstone 2008, sec. 6.2)."""

from __future__ import annotations

import numpy as np

from dynid.dynamics.arrays import joint_arrays
from dynid.dynamics.kinematics import joint_transforms
from dynid.dynamics.spatial import motion_transform, spatial_inertia


def mass_matrix(robot, q) -> np.ndarray:
    """M(q): (N, n, n) symmetric positive definite joint-space inertia [kg m^2 | kg].

    q: (N, n) joint positions. A single sample (n,) gives (n, n).
    """
    (q,), single = joint_arrays(robot, q=q)
    rel_r, rel_t = joint_transforms(robot, q)
    x = motion_transform(rel_r, rel_t)  # (N, n, 6, 6) X_{i<-p}
    composite = np.broadcast_to(spatial_inertia(robot.parameters().reshape(-1, 10)), x.shape).copy()
    for i in range(robot.n - 1, -1, -1):  # I^c_p += X^T I^c_i X
        p = robot.parents[i]
        if p >= 0:
            composite[:, p] += np.swapaxes(x[:, i], -1, -2) @ composite[:, i] @ x[:, i]
    s = robot.screw_axes
    m = np.zeros((q.shape[0], robot.n, robot.n))
    for i in range(robot.n):
        f = composite[:, i] @ s[i]  # (N, 6) force of a unit acceleration of joint i
        m[:, i, i] = f @ s[i]
        j = i
        while robot.parents[j] >= 0:
            f = np.einsum("nji,nj->ni", x[:, j], f)  # X*_{p<-j} f = X_{j<-p}^T f
            j = robot.parents[j]
            m[:, i, j] = m[:, j, i] = f @ s[j]
    return m[0] if single else m
