"""Joint-space mass matrix from the compiled inverse dynamics, one unit acceleration per column."""

from __future__ import annotations

import numpy as np

from dynid.dynamics import mimic
from dynid.dynamics.arrays import joint_arrays
from dynid.dynamics.rnea import inverse_dynamics


def mass_matrix(robot, q) -> np.ndarray:
    """M(q): (N, n, n) symmetric positive definite joint-space inertia [kg m^2 | kg].

    Column j is M(q) e_j = ID(q, 0, e_j) without gravity (Walker & Orin's method 1): all N n
    columns go through the compiled RNEA kernel in one call, which beats the composite-rigid-body
    algorithm written in NumPy at every batch size here. q: (N, n); a single (n,) gives (n, n).
    """
    if robot.has_mimic:  # M = G^T M_tree G (dynamics/mimic.py)
        return mimic.mass_matrix(robot, q, tree=mass_matrix)
    (q,), single = joint_arrays(robot, q=q)
    count, n = q.shape
    q_rep = np.repeat(q, n, axis=0)
    unit = np.tile(np.eye(n), (count, 1))
    columns = inverse_dynamics(robot, q_rep, np.zeros_like(q_rep), unit, gravity=np.zeros(3))
    m = np.swapaxes(columns.reshape(count, n, n), 1, 2)  # [k, :, j] = M(q_k) e_j
    return m[0] if single else m
